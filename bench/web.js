// Web page: the time `nodereg serve` takes to answer a node's page (Accept: text/html) at 10,000 nodes,
// beside the same node's JSON answer, and the page's size. The target: under 20 ms, under 100 KB.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ms, row, startServe, timeAsync, workDir } from './lib.js';
import { seedStore } from './seed-store.js';

const COUNT = 10_000;
const HTML = 'text/html,application/xhtml+xml,*/*;q=0.8';

async function fetchText(url, accept) {
  const response = await fetch(url, { headers: { accept } });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${text.slice(0, 200)}`);
  return text;
}

export default async function web() {
  const dir = workDir('web');
  await seedStore(join(dir, 'data'), COUNT);
  const server = await startServe({
    dataDir: join(dir, 'data'),
    adminToken: `nrg_u_${randomBytes(16).toString('hex')}`,
  });
  try {
    // a node from the middle of the list
    const list = JSON.parse(await fetchText(`${server.url}/nodes?limit=1&page=${COUNT / 2}`, 'application/json'));
    const url = `${server.url}/nodes/${list.nodes[0].id}`;
    const bytes = Buffer.byteLength(await fetchText(url, HTML));
    const page = await timeAsync(() => fetchText(url, HTML), { runs: 30, warmup: 5 });
    const json = await timeAsync(() => fetchText(url, 'application/json'), { runs: 30, warmup: 5 });
    const home = await timeAsync(() => fetchText(`${server.url}/`, HTML), { runs: 30, warmup: 5 });
    return {
      rows: [
        row(
          `web: node page at ${COUNT.toLocaleString('en')} nodes`,
          `${ms(page)} (${(bytes / 1024).toFixed(1)} KB)`,
          `its JSON answer: ${ms(json)}`,
          page / json,
          '< 20 ms, < 100 KB',
          page < 20 && bytes < 100 * 1024,
        ),
        row(
          `web: home page at ${COUNT.toLocaleString('en')} nodes`,
          ms(home),
          `node page: ${ms(page)}`,
          home / page,
          '(shown)',
        ),
      ],
      notes: [
        'web: medians of 30 sequential requests over HTTP from the benchmark process to `nodereg serve` on the same machine (the request, rendering and the answer; no browser)',
      ],
    };
  } finally {
    await server.stop();
  }
}
