// Every temporary directory of a test run is made under one directory, removed when the run ends:
// vitest may stop a test process without a normal exit, and then that process's own cleanups never
// run (runs of the whole suite once left tens of GB behind in the system's temp dir). The run's
// PostgreSQL cluster (test/postgres.ts), started by the first file that needs one, is stopped here.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binDir, SHARED_POSTGRES_DIR, stopPostgres } from './postgres-server.js';

/** Set once the run's root is made: vitest runs this setup once per project (vitest.config.ts), in one process. */
const RUN_ROOT = 'NODEREG_TEST_RUN_ROOT';

export default function setup(): () => void {
  // One root and one cluster for the whole run: a root per project nested each in the one before, and the
  // cluster's Unix socket path inside the deepest grew past the 107 bytes a socket path may have.
  if (process.env[RUN_ROOT]) return () => {};
  const root = mkdtempSync(join(tmpdir(), 'nodereg-tests-'));
  process.env[RUN_ROOT] = root;
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
