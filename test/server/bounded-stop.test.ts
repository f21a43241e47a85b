// The graceful stop has an upper bound (closeTimeout, 60 s in `serve`): clients that keep trickling
// bytes (a header line now and then, an upload a few bytes at a time) are never cut as stalled, and
// would hold the stop up to the headers or the request timeout. Past the bound every connection left is
// cut, the database is closed, nothing of the cut upload is stored, and its retry after a restart works.
import { request } from 'node:http';
import { connect } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startServer } from '../helpers.js';
import { createPublisher, createUser, makeZip, publish, uploadTo } from './fixtures.js';

const BOUND = 1500;

describe('a graceful stop with clients trickling bytes', () => {
  it('cuts them once the bound has passed, closes the database; the cut upload can be sent again after a restart', async () => {
    const logged: string[] = [];
    const server = await startServer({ closeTimeout: BOUND, log: (line) => logged.push(line), accessLog: false });
    const alice = await createUser(server, 'alice');
    await createPublisher(server, alice, 'alice-co');
    const published = await publish(server, alice.token, 'alice-co', 'trickle', '1.0.0');
    expect(published.status, published.text).toBe(201);
    const zip = await makeZip({ 'node.py': '# trickle\n'.repeat(500) });

    const drips: NodeJS.Timeout[] = [];
    // An upload sending 8 bytes every 100 ms: far from done when the bound passes.
    const upload = new Promise<string>((resolve) => {
      const req = request(published.body.signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip', 'content-length': zip.length } });
      req.on('response', (res) => resolve(`answered ${res.statusCode}`));
      req.on('error', (error: NodeJS.ErrnoException) => resolve(`cut (${error.code})`));
      let sent = 0;
      drips.push(setInterval(() => sent < zip.length && req.write(zip.subarray(sent, (sent += 8))), 100));
    });
    // A request whose headers come one short line every 100 ms.
    const headers = new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
      let answer = '';
      socket.on('data', (data) => (answer += data));
      socket.on('error', () => {});
      socket.on('close', () => resolve(answer === '' ? 'cut' : answer));
      socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      let line = 0;
      drips.push(setInterval(() => !socket.destroyed && socket.write(`X-Drip-${++line}: 1\r\n`), 100));
    });
    await vi.waitFor(() => expect(readdirSync(join(server.dataDir, 'archives', '.tmp'))).toHaveLength(1), { timeout: 5_000, interval: 20 });

    const started = performance.now();
    const closed = server.close().then(() => performance.now() - started);
    // Without the bound the stop waits for the trickles: fail after 10 s rather than hang the run.
    const took = await Promise.race([closed, new Promise<string>((resolve) => setTimeout(() => resolve('still closing after 10 s'), 10_000))]);
    for (const drip of drips) clearInterval(drip);
    expect(typeof took === 'number' && took >= BOUND - 50 && took < BOUND + 3_000, String(took)).toBe(true);
    expect(await upload).toMatch(/^cut/);
    expect(await headers).toBe('cut');
    expect(server.server.db?.open).toBe(false);
    expect(logged.join('\n')).toContain(`closing: cut 2 connection(s) still open ${BOUND / 1000} s after the stop began`);
    // (The cut upload removes its temporary file as it fails; a restart would sweep it too.)
    await vi.waitFor(() => expect(readdirSync(join(server.dataDir, 'archives', '.tmp'))).toEqual([]), { timeout: 2_000, interval: 20 });

    const again = await startServer({ dataDir: server.dataDir, adminToken: server.adminToken });
    const versions = await fetch(`${again.url}/nodes/trickle/versions`, { headers: { authorization: `Bearer ${alice.token}` } }).then(
      (res) => res.json() as Promise<{ version: string; status: string; archive_sha256?: string }[]>,
    );
    expect(versions.map((v) => [v.version, v.status, v.archive_sha256 !== undefined])).toEqual([
      ['1.0.0', 'NodeVersionStatusPending', false],
    ]);
    const retried = await uploadTo(published.body.signedUrl.replace(server.url, again.url), zip);
    expect(retried.status, retried.text).toBe(200);
    await again.close();
  }, 30_000);
});
