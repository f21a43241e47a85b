// Every byte an upload holds in memory counts against the server's upload budget (DESIGN.md §3):
// the receive buffers between the socket and the temporary file as well as the archive read whole for
// its check and the entries kept for the scan. When the budget is used up an upload takes the small
// buffers and the file path instead of being refused. Watched from outside: 128 uploads of an archive
// near the in-memory limit, all started slowly and then sent as fast as loopback goes, against a
// registry in its own process with a small budget.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { latency } from '../../figures.js';
import { tempDir, type TestServer } from '../../helpers.js';
import { createPublisher, createUser, publish } from '../fixtures.js';
import { startChild, storedZip } from '../child.js';

const MiB = 1024 * 1024;
const UPLOADS = 128;
const BUDGET = 16 * MiB;

/** CPU time (user + system) of a process so far, in ms (clock ticks of 10 ms). */
const cpuMs = (pid: number) =>
  readFileSync(`/proc/${pid}/stat`, 'utf8')
    .split(') ')[1]
    .split(' ')
    .slice(11, 13)
    .reduce((sum, ticks) => sum + Number(ticks) * 10, 0);

/** PUTs `zip` to `signedUrl`: `head` bytes at once, the rest when `go` settles; resolves to the answer's status. */
function upload(signedUrl: string, zip: Buffer, head: number, go: Promise<void>): Promise<number> {
  const url = new URL(signedUrl);
  return new Promise((done, fail) => {
    const req = request(
      url,
      { method: 'PUT', headers: { 'content-type': 'application/zip', 'content-length': zip.length } },
      (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode!));
      },
    );
    req.on('error', fail);
    req.write(zip.subarray(0, head));
    void go.then(() => req.end(zip.subarray(head)));
  });
}

it('holds no more than its budget and a small bound per upload, answers /healthz and every upload, and gives the budget back', async () => {
  // every upload let in at once (no cap on uploads in progress): it is the memory budget that bounds them
  const server = await startChild(tempDir(), {
    options: { uploadMemory: BUDGET, uploads: { perVersion: UPLOADS, perPublisher: UPLOADS } },
  });
  const prober = fork(resolve(import.meta.dirname, '../healthz-prober.js'), [server.url], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const api = { url: server.url, adminToken: server.adminToken } as TestServer;
    const owner = await createUser(api, 'budget');
    await createPublisher(api, owner, 'budget-co');
    const published = await publish(api, owner.token, 'budget-co', 'big', '1.0.0');
    expect(published.status, published.text).toBe(201);
    // One archive for all (the client holds it once): each upload is received and checked, one stores it, the others are 409.
    const zip = await storedZip({ '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n', 'weights.bin': randomBytes(7 * MiB) });
    await new Promise((done) => prober.once('message', done));
    const before = await server.memory();
    const cpuBefore = cpuMs(server.process.pid!);

    let go!: () => void;
    const started = new Promise<void>((done) => (go = done));
    const uploads = Array.from({ length: UPLOADS }, () => upload(published.body.signedUrl, zip, 64 * 1024, started));
    await new Promise((done) => setTimeout(done, 1000)); // every upload under way, slowly
    go();
    const statuses = await Promise.all(uploads);
    const during = await server.memory();
    const cpu = cpuMs(server.process.pid!) - cpuBefore;
    prober.send('stop');
    const { probes } = (await new Promise((done) => prober.once('message', done))) as { probes: { ms: number }[] };

    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status !== 200).every((status) => status === 409)).toBe(true);
    const grew = during.peak - before.rss;
    const slowest = Math.max(...probes.map((probe) => probe.ms));
    console.log(
      `RSS ${Math.round(before.rss / MiB)} → peak ${Math.round(during.peak / MiB)} MiB (+${Math.round(grew / MiB)}); /healthz probes ${probes.length}, slowest ${slowest.toFixed(1)} ms; server CPU ${cpu} ms`,
    );
    // The budget, the small buffers of each upload outside it (~0.25 MiB) and its check's pieces (< 1 MiB),
    // with a wide margin for the garbage between collections.
    expect(grew).toBeLessThan(BUDGET + UPLOADS * 1.25 * MiB + 64 * MiB);
    latency(
      'uploads.memory_budget_healthz_max_ms',
      probes.map((probe) => probe.ms),
      1,
    ); // its target is `npm run bench latency`'s
    expect(await server.uploadMemory()).toBe(0);
  } finally {
    prober.kill();
    await server.close();
  }
}, 60_000);
