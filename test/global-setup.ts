// Every temporary directory of a test run is made under one directory, removed when the run ends:
// vitest may stop a test process without a normal exit, and then that process's own cleanups never
// run (runs of the whole suite once left tens of GB behind in the system's temp dir).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'nodereg-tests-'));
  chmodSync(root, 0o755); // PostgreSQL runs as its own user (test/postgres-server.js) and must reach its dir inside
  process.env.TMPDIR = root; // os.tmpdir() of the test processes, which inherit it
  return () => rmSync(root, { recursive: true, force: true });
}
