// Instances: `GET /nodes/{id}` throughput of two `nodereg serve` processes sharing one PostgreSQL
// (started here from the system's binaries, as the tests do) against one process on SQLite, with the
// same load generator: two autocannon runs of 25 connections at once, one per instance (both at the
// single SQLite instance). On this 2-core machine the servers, PostgreSQL and the load generator share
// the cores, so the ratio says what a second process costs or gains here, not on a larger machine.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { binDir, startPostgres } from '../test/postgres-server.js';
import { ms, row, startServe, workDir } from './lib.js';

const CONNECTIONS = 25; // per autocannon run; two runs at once
const DURATION = 10;

async function load(urls, duration = DURATION) {
  const results = await Promise.all(urls.map((url) => autocannon({ url, connections: CONNECTIONS, duration })));
  for (const result of results)
    if (result.errors || result.non2xx || result.timeouts)
      throw new Error(`${result.url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  return {
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    p99: Math.max(...results.map((r) => r.latency.p99)),
  };
}

/** A user, a publisher and a published node through the API; its URL on every instance. */
async function publishNode(urls, adminToken) {
  const post = async (path, token, body) => {
    const response = await fetch(`${urls[0]}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const { token } = await post('/users', adminToken, { name: 'bench' });
  await post('/publishers', token, { id: 'bench-co' });
  await post('/publishers/bench-co/nodes/bench-node/versions', token, {
    node: { id: 'bench-node', description: 'a node to read' },
    node_version: { version: '1.0.0' },
  });
  return urls.map((url) => `${url}/nodes/bench-node`);
}

export default async function instances() {
  const bin = binDir();
  if (!bin) throw new Error('PostgreSQL is not installed (no initdb)');
  const adminToken = `nrg_u_${randomBytes(16).toString('hex')}`;
  const dir = workDir('instances');

  const sqlite = await startServe({ dataDir: join(dir, 'sqlite'), adminToken });
  let one;
  try {
    const [url] = await publishNode([sqlite.url], adminToken);
    await load([url, url], 2);
    one = await load([url, url]);
  } finally {
    await sqlite.stop();
  }

  const postgres = await startPostgres(bin);
  let two;
  try {
    const database = await postgres.handle.database();
    const args = ['--database', database, '--storage', join(dir, 'archives')];
    const servers = await Promise.all(
      ['a', 'b'].map((name) => startServe({ dataDir: join(dir, name), adminToken, args })),
    );
    try {
      const urls = await publishNode(
        servers.map((s) => s.url),
        adminToken,
      );
      await load(urls, 2);
      two = await load(urls);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  } finally {
    await postgres.stop();
  }

  const rate = (r) => `${Math.round(r.rps).toLocaleString('en')}/s, p99 ${ms(r.p99)}`;
  return {
    rows: [
      row(
        'instances: `GET /nodes/{id}`, two on PostgreSQL',
        rate(two),
        `one on SQLite: ${rate(one)}`,
        two.rps / one.rps,
        '(reported: the servers, PostgreSQL and the load generator share 2 cores)',
      ),
    ],
    notes: [
      `instances: two autocannon runs of ${CONNECTIONS} connections for ${DURATION} s at once (after 2 s of warm-up), one per instance; both at the one SQLite instance`,
    ],
  };
}
