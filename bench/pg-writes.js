// PostgreSQL writes and reads: `POST /nodes/{id}/reviews?star=N` and `GET /nodes/{id}` of one
// `nodereg serve` on PostgreSQL (started here from the system's binaries, as the tests do, with
// fsync=off and synchronous_commit=off) against one on SQLite, with the same load generator
// (autocannon, 50 connections, each reviewing as its own user), one after the other in one run. The
// server's CPU per review is its process's user + system time over the reviews answered.
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { binDir, startPostgres } from '../test/postgres-server.js';
import { CONNECTIONS, DURATION, measure, ms, row, startServe, workDir } from './lib.js';

// The registry's connections to PostgreSQL: two per core of the machine PostgreSQL runs on (here the same
// 2 cores), the usual sizing of a pool in front of PostgreSQL. With the default 10, fifty reviewers of one
// node keep more backends waiting on that node's row lock than the cores can run (bench/results.md).
const POOL = 2 * availableParallelism();

/** A publisher's node and CONNECTIONS reviewers (none a member); the node's URL and the reviewers' tokens. */
async function setUp(url, adminToken) {
  const post = async (path, token, body) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const { token } = await post('/users', adminToken, { name: 'owner' });
  await post('/publishers', token, { id: 'bench-co' });
  await post('/publishers/bench-co/nodes/bench-node/versions', token, {
    node: { id: 'bench-node', description: 'a node to review' },
    node_version: { version: '1.0.0' },
  });
  const tokens = [];
  for (let i = 0; i < CONNECTIONS; i++) tokens.push((await post('/users', adminToken, { name: `reviewer${i}` })).token);
  return { node: `${url}/nodes/bench-node`, tokens };
}

async function both(server, adminToken) {
  const { node, tokens } = await setUp(server.url, adminToken);
  const get = await measure(node, { pid: server.pid });
  const review = await measure(`${node}/reviews?star=1`, { method: 'POST', tokens, pid: server.pid });
  return { get, review };
}

export default async function pgWrites() {
  const bin = binDir();
  if (!bin) throw new Error('PostgreSQL is not installed (no initdb)');
  const adminToken = `nrg_u_${randomBytes(16).toString('hex')}`;
  const dir = workDir('pg-writes');
  const sqliteServer = await startServe({ dataDir: join(dir, 'sqlite'), adminToken });
  let sqlite;
  try {
    sqlite = await both(sqliteServer, adminToken);
  } finally {
    await sqliteServer.stop();
  }
  const postgres = await startPostgres(bin);
  let pg;
  try {
    const database = await postgres.handle.database();
    await postgres.handle.admin.unsafe(
      `ALTER DATABASE ${new URL(database).pathname.slice(1)} SET synchronous_commit = off`,
    );
    const args = ['--database', database, '--storage', join(dir, 'archives'), '--pg-pool', String(POOL)];
    const server = await startServe({ dataDir: join(dir, 'pg'), adminToken, args });
    try {
      pg = await both(server, adminToken);
    } finally {
      await server.stop();
    }
  } finally {
    await postgres.stop();
  }
  const rate = (r) => `${Math.round(r.rps).toLocaleString('en')}/s, p99 ${ms(r.p99)}`;
  const cpu = (r) => `${Math.round(r.cpu)} µs`;
  return {
    rows: [
      row(
        'pg-writes: reviews on PostgreSQL',
        rate(pg.review),
        `SQLite: ${rate(sqlite.review)}`,
        pg.review.rps / sqlite.review.rps,
        '≥ 2,000/s, p99 < 50 ms',
        pg.review.rps >= 2_000 && pg.review.p99 < 50,
      ),
      row(
        'pg-writes: server CPU per review on PostgreSQL',
        cpu(pg.review),
        `SQLite: ${cpu(sqlite.review)}`,
        pg.review.cpu / sqlite.review.cpu,
        '≤ 300 µs',
        pg.review.cpu <= 300,
      ),
      row(
        'pg-writes: `GET /nodes/{id}` on PostgreSQL',
        rate(pg.get),
        `SQLite: ${rate(sqlite.get)}`,
        pg.get.rps / sqlite.get.rps,
        '≥ 0.8× SQLite',
        pg.get.rps >= 0.8 * sqlite.get.rps,
      ),
    ],
    notes: [
      `pg-writes: server CPU per GET /nodes/{id}: PostgreSQL ${cpu(pg.get)}, SQLite ${cpu(sqlite.get)}`,
      `pg-writes: autocannon, ${CONNECTIONS} connections for ${DURATION} s after 2 s of warm-up, SQLite's server then PostgreSQL's; PostgreSQL 15 with fsync=off and synchronous_commit=off, the registry's pool at ${POOL} connections (\`--pg-pool\`, 2 per core), on the same 2 cores as the server and the load generator; CPU per request is the server process's only (PostgreSQL's own is not counted)`,
    ],
  };
}
