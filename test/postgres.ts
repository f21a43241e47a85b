// A real PostgreSQL server for the tests (test/postgres-server.js starts it from the system's
// binaries). One cluster serves every test file of a run (the first file that needs it starts it, the
// run's global teardown stops it); a file that freezes its server asks for one of its own. Each test
// gets a fresh database of its own, empty or already migrated.
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, vi } from 'vitest';
import { migratePostgres } from '../src/server/store/postgres/migrate.js';
import { binDir, connectPostgres, type PostgresHandle, SHARED_POSTGRES_DIR, startPostgres } from './postgres-server.js';

export interface TestPostgres {
  /** A fresh, empty database's URL. */
  database(): Promise<string>;
  /** A fresh database with every migration applied (a copy of one migrated once per cluster): its URL. */
  migratedDatabase(): Promise<string>;
  /**
   * SIGSTOP freezes the server and its backends (connections stay open, nothing answers); SIGCONT thaws
   * them. Only on a server of the file's own (`testPostgres({ own: true })`).
   */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void;
}

/** How long a file waits for another file's process to start the shared cluster (initdb is slow under load). */
const SHARED_START_WAIT_MS = 180_000;
const MIGRATED_TEMPLATE = 'nodereg_migrated';

let started: Promise<TestPostgres> | undefined;

/**
 * The PostgreSQL server, started on first use. When none is installed: in CI (CI set) an error, so the
 * suite fails rather than skips; elsewhere undefined, with a loud message, and its tests skip.
 */
export function testPostgres(options: { own?: boolean } = {}): Promise<TestPostgres> | undefined {
  const bin = binDir();
  if (!bin) {
    const missing = 'PostgreSQL is not installed (no initdb); `.ci/run` installs it.';
    if (process.env.CI) throw new Error(`${missing} In CI the PostgreSQL suites must run.`);
    console.warn(`\n*** ${missing} The PostgreSQL suites are SKIPPED. ***\n`);
    return undefined;
  }
  if (!started) {
    // Without the run's shared cluster (set by test/global-setup.ts), a file starts its own.
    const sharedDir = options.own ? undefined : process.env[SHARED_POSTGRES_DIR];
    const cluster = sharedDir ? sharedCluster(bin, sharedDir) : ownCluster(bin);
    started = cluster.then(({ handle }) => testDatabases(handle, !sharedDir));
    // Registered here, at collection time: after the file's last test, its databases are dropped (shared)
    // or its server stops, and the next file of a shared test process asks anew. pg_ctl's stop waits for
    // the server to exit, which a loaded machine can hold past the default 30 s.
    afterAll(async () => {
      started = undefined;
      await (await cluster).release();
    }, 120_000);
  }
  return started;
}

interface Cluster {
  handle: PostgresHandle;
  release(): Promise<void>;
}

async function ownCluster(bin: string): Promise<Cluster> {
  const server = await startPostgres(bin);
  return { handle: server.handle, release: () => server.stop() };
}

/**
 * The run's cluster in `dir`: the first process to make `dir` starts it and writes `ready.json`; the
 * others wait for that file. Its databases made by this file are dropped after the file.
 */
async function sharedCluster(bin: string, dir: string): Promise<Cluster> {
  const ready = join(dir, '..', 'postgres-ready.json');
  let starter = false;
  try {
    mkdirSync(dir);
    starter = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const announce = (value: object) => {
    writeFileSync(`${ready}.tmp`, JSON.stringify(value));
    renameSync(`${ready}.tmp`, ready);
  };
  if (starter) {
    try {
      const server = await startPostgres(bin, dir);
      await server.handle.end();
      announce({ port: server.port, dir });
    } catch (error) {
      announce({ error: (error as Error).message });
      throw error;
    }
  } else await waitForFile(ready, SHARED_START_WAIT_MS);
  const cluster = JSON.parse(readFileSync(ready, 'utf8')) as { port: number; dir: string; error?: string };
  if (cluster.error) throw new Error(`the shared PostgreSQL cluster did not start: ${cluster.error}`);
  const handle = await connectPostgres(cluster);
  const made: string[] = [];
  const database = handle.database;
  handle.database = async (template) => {
    const url = await database(template);
    made.push(new URL(url).pathname.slice(1));
    return url;
  };
  const release = async () => {
    for (const name of made) await handle.admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await handle.end();
  };
  return { handle, release };
}

/** Another process is starting the cluster: a file appearing is the only event shared across processes. */
async function waitForFile(path: string, timeout: number): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`the shared PostgreSQL cluster did not start within ${timeout} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function testDatabases(handle: PostgresHandle, own: boolean): TestPostgres {
  let template: Promise<void> | undefined;
  return {
    database: () => handle.database(),
    async migratedDatabase() {
      template ??= migratedTemplate(handle);
      await template;
      return handle.database(MIGRATED_TEMPLATE);
    },
    signal(signal) {
      if (!own) throw new Error('signal() freezes the whole server: ask for testPostgres({ own: true })');
      handle.signal(signal);
    },
  };
}

/**
 * Makes the migrated template once per cluster: under an advisory lock (files in other processes may
 * ask at the same time), migrated under another name, then renamed, so a half-made one is never used.
 */
async function migratedTemplate(handle: PostgresHandle): Promise<void> {
  const connection = await handle.admin.reserve();
  try {
    await connection`SELECT pg_advisory_lock(7411299)`;
    const exists = await connection`SELECT 1 FROM pg_database WHERE datname = ${MIGRATED_TEMPLATE}`;
    if (exists.length) return;
    const building = `${MIGRATED_TEMPLATE}_${process.pid}`;
    await connection.unsafe(`DROP DATABASE IF EXISTS ${building}`);
    await connection.unsafe(`CREATE DATABASE ${building}`);
    const sql = postgres(handle.url(building), { max: 4, onnotice: () => {} });
    try {
      await migratePostgres(sql);
    } finally {
      await sql.end();
    }
    await connection.unsafe(`ALTER DATABASE ${building} RENAME TO ${MIGRATED_TEMPLATE}`);
    await connection.unsafe(`ALTER DATABASE ${MIGRATED_TEMPLATE} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
  } finally {
    await connection`SELECT pg_advisory_unlock(7411299)`.catch(() => {});
    connection.release();
  }
}

/** Far past a change notice's delivery between instances on one machine, however loaded: later is a lost notice. */
const NOTICE_HEARD_MS = 10_000;

/** Holds once another instance has heard a change's notice: `check` is polled, not slept for. */
export function heard(check: () => Promise<void>): Promise<void> {
  return vi.waitFor(check, { timeout: NOTICE_HEARD_MS, interval: 10 });
}
