// Every temporary directory of a test run is made under one directory, removed when the run ends:
// vitest may stop a test process without a normal exit, and then that process's own cleanups never
// run (runs of the whole suite once left tens of GB behind in the system's temp dir). The run's
// PostgreSQL cluster (test/postgres.ts), started by the first file that needs one, is stopped here.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binDir, SHARED_POSTGRES_DIR, stopPostgres } from './postgres-server.js';

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'nodereg-tests-'));
  chmodSync(root, 0o755); // PostgreSQL runs as its own user (test/postgres-server.js) and must reach its dir inside
  process.env.TMPDIR = root; // os.tmpdir() of the test processes, which inherit it
  const postgresDir = join(root, 'postgres');
  process.env[SHARED_POSTGRES_DIR] = postgresDir;
  return () => {
    const bin = binDir();
    if (bin) stopPostgres(bin, postgresDir);
    rmSync(root, { recursive: true, force: true });
  };
}
