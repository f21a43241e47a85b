// A real PostgreSQL server started from the system's binaries (initdb, pg_ctl) in a temp dir on a
// free port, as the `postgres` user when run as root (PostgreSQL refuses root). Plain JavaScript, so
// that the tests (test/postgres.ts) and the benchmarks (bench/instances.js) share it.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** Where initdb and pg_ctl are: `pg_config --bindir`, else the newest /usr/lib/postgresql/N/bin. */
export function binDir() {
  const candidates = [];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim());
  } catch {
    // not installed
  }
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    for (const version of readdirSync(base).sort((a, b) => Number(b) - Number(a)))
      candidates.push(join(base, version, 'bin'));
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

/** The environment variable naming where a test run's shared cluster lives (test/global-setup.ts sets it). */
export const SHARED_POSTGRES_DIR = 'NODEREG_TEST_POSTGRES_DIR';

const asRoot = () => userInfo().uid === 0;

/** Runs one of PostgreSQL's tools, as the `postgres` user when this process is root. */
function runTool(bin, tool, args) {
  return asRoot()
    ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { stdio: 'pipe' })
    : execFileSync(join(bin, tool), args, { stdio: 'pipe' });
}

/**
 * Makes a cluster in `dir` (an empty directory; a new temp dir by default) and starts it. `dir` is the
 * cluster's: stopPostgres(bin, dir) stops it and removes the directory.
 */
export async function startPostgres(bin, dir = mkdtempSync(join(tmpdir(), 'nodereg-pg-'))) {
  if (asRoot())
    chownSync(
      dir,
      Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
      Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
    );
  const data = join(dir, 'data');
  runTool(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', 'nodereg', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  runTool(bin, 'pg_ctl', [
    '-D',
    data,
    '-l',
    join(dir, 'log'),
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
    'start',
  ]);
  const handle = await connectPostgres({ port, dir });
  return {
    port,
    dir,
    handle,
    async stop() {
      await handle.end();
      stopPostgres(bin, dir);
    },
  };
}

/** Stops the cluster in `dir` at once, if it runs, and removes the directory. */
export function stopPostgres(bin, dir) {
  if (existsSync(join(dir, 'data', 'postmaster.pid')))
    runTool(bin, 'pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', 'stop']);
  rmSync(dir, { recursive: true, force: true });
}

/** A handle on the cluster listening on `port` with its data in `dir`/data, which may be another process's. */
export async function connectPostgres({ port, dir }) {
  const { default: postgres } = await import('postgres');
  const admin = postgres(`postgres://nodereg@127.0.0.1:${port}/postgres`, { max: 1, onnotice: () => {} });
  let count = 0;
  return {
    admin,
    url: (name) => `postgres://nodereg@127.0.0.1:${port}/${name}`,
    /** A new database, empty or a copy of `template`. Names are unique across processes sharing the cluster. */
    async database(template) {
      const name = `test_${process.pid}_${++count}`;
      await admin.unsafe(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
      return `postgres://nodereg@127.0.0.1:${port}/${name}`;
    },
    /** Sends SIGSTOP or SIGCONT to the server and its children (a frozen host: connections stay open, nothing answers). */
    signal(signal) {
      const postmaster = Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
      const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map(Number);
      for (const pid of [postmaster, ...children]) {
        try {
          process.kill(pid, signal);
        } catch (error) {
          if (error.code !== 'ESRCH') throw error; // a backend that ended after ps listed it
        }
      }
    },
    end: () => admin.end(),
  };
}
