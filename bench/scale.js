// Scale: `GET /nodes?page=` (first and a deep page) and search (a selective term, one matching about
// 40% of nodes, one matching every node) against `nodereg serve` with 10, 1,000 and 100,000 nodes
// seeded in bulk. The table shows how each grows from 10 nodes; search must stay under 50 ms at 100,000.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ms, row, startServe, timeAsync, workDir, WORK } from './lib.js';
import { seedStore, TERMS } from './seed-store.js';

const SIZES = [10, 1_000, 100_000];
const LIMIT = 20;

/** Seeded data dirs are kept in bench/.work between runs while the schema and the seeder are unchanged. */
async function seeded(count) {
  const dir = join(WORK, `scale-${count}`);
  const marker = join(dir, 'seeded.json');
  const stamp = createHash('sha256')
    .update(readFileSync(resolve(import.meta.dirname, '../src/server/store/migrations.ts')))
    .update(readFileSync(resolve(import.meta.dirname, 'seed-store.js')))
    .digest('hex');
  if (existsSync(marker) && JSON.parse(readFileSync(marker, 'utf8')).stamp === stamp)
    return { dir, seconds: undefined };
  const started = Date.now();
  await seedStore(join(workDir(`scale-${count}`), 'data'), count);
  writeFileSync(marker, JSON.stringify({ stamp }));
  return { dir, seconds: (Date.now() - started) / 1000 };
}

async function getJson(url) {
  const response = await fetch(url);
  const body = await response.json();
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

export default async function scale() {
  const measures = [
    ['`GET /nodes` first page', () => `/nodes?limit=${LIMIT}`],
    ['`GET /nodes` deep page (the last)', (count) => `/nodes?limit=${LIMIT}&page=${Math.ceil(count / LIMIT)}`],
    [
      `search, selective term (\`${TERMS.selective}\`: 1 in 1,000)`,
      () => `/nodes/search?q=${TERMS.selective}&limit=${LIMIT}`,
    ],
    [`search, term in ~40% (\`${TERMS.common}\`)`, () => `/nodes/search?q=${TERMS.common}&limit=${LIMIT}`],
    [`search, term in every node (\`${TERMS.every}\`)`, () => `/nodes/search?q=${TERMS.every}&limit=${LIMIT}`],
  ];
  const times = measures.map(() => []);
  const notes = [];
  for (const count of SIZES) {
    const { dir, seconds } = await seeded(count);
    notes.push(
      `scale: ${count.toLocaleString('en')} nodes ${seconds === undefined ? 'reused from an earlier run (bench/.work)' : `seeded in ${seconds.toFixed(0)} s`}`,
    );
    const server = await startServe({
      dataDir: join(dir, 'data'),
      adminToken: `nrg_u_${randomBytes(16).toString('hex')}`,
    });
    try {
      for (const [index, [, path]] of measures.entries()) {
        const url = server.url + path(count);
        const body = await getJson(url);
        if (body.total === 0 || body.nodes.length === 0) throw new Error(`${url} found nothing`);
        times[index].push(await timeAsync(() => getJson(url), { runs: 15, warmup: 3 }));
      }
    } finally {
      await server.stop();
    }
  }
  notes.push(
    'scale: each figure is the median of 15 sequential requests over HTTP (limit 20) from the benchmark process to `nodereg serve` on the same machine',
  );
  const rows = measures.map(([name], index) => {
    const [small, , large] = times[index];
    const measured = SIZES.map((count, i) => `${count.toLocaleString('en')}: ${ms(times[index][i])}`).join(' · ');
    const search = name.startsWith('search');
    return row(
      `scale: ${name}`,
      measured,
      `10 nodes: ${ms(small)}`,
      large / small,
      search ? '< 50 ms at 100,000' : '(growth shown)',
      search ? large < 50 : undefined,
    );
  });
  return { rows, notes };
}
