// A real PostgreSQL server for the tests (test/postgres-server.js starts it from the system's
// binaries). One per test file at most; each test gets a fresh database of its own.
import { afterAll } from 'vitest';
import { binDir, startPostgres } from './postgres-server.js';

export interface TestPostgres {
  /** A fresh, empty database's URL. */
  database(): Promise<string>;
  /** SIGSTOP freezes the server and its backends (connections stay open, nothing answers); SIGCONT thaws them. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void;
}

let started: Promise<TestPostgres> | undefined;

/**
 * The file's PostgreSQL server, started on first use. When none is installed: in CI (CI set) an error,
 * so the suite fails rather than skips; elsewhere undefined, with a loud message, and its tests skip.
 */
export function testPostgres(): Promise<TestPostgres> | undefined {
  const bin = binDir();
  if (!bin) {
    const missing = 'PostgreSQL is not installed (no initdb); `.ci/run` installs it.';
    if (process.env.CI) throw new Error(`${missing} In CI the PostgreSQL suites must run.`);
    console.warn(`\n*** ${missing} The PostgreSQL suites are SKIPPED. ***\n`);
    return undefined;
  }
  if (!started) {
    const server = startPostgres(bin);
    started = server.then((s) => s.handle);
    // Registered here, at collection time: the server stops after the file's last test.
    // pg_ctl's stop waits for the server to exit, which a loaded machine can hold past the default 30 s
    afterAll(async () => (await server).stop(), 120_000);
  }
  return started;
}
