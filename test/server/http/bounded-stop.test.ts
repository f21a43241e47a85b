// The graceful stop has an upper bound (closeTimeout, 60 s in `serve`): clients that keep trickling
// bytes (a header line now and then, an upload a few bytes at a time) are never cut as stalled, and
// would hold the stop up to the headers or the request timeout. Past the bound every connection left is
// cut, the database is closed, nothing of the cut upload is stored, and its retry after a restart works.
import { randomBytes } from 'node:crypto';
import { request, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startServer } from '../../helpers.js';
import { createPublisher, createUser, makeZip, publish, uploadTo } from '../fixtures.js';

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
      const req = request(published.body.signedUrl, {
        method: 'PUT',
        headers: { 'content-type': 'application/zip', 'content-length': zip.length },
      });
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
    await vi.waitFor(() => expect(readdirSync(join(server.dataDir, 'archives', '.tmp'))).toHaveLength(1), {
      timeout: 5_000,
      interval: 20,
    });

    const started = performance.now();
    const closed = server.close().then(() => performance.now() - started);
    // Without the bound the stop waits for the trickles: fail after 10 s rather than hang the run.
    const took = await Promise.race([
      closed,
      new Promise<string>((resolve) => setTimeout(() => resolve('still closing after 10 s'), 10_000)),
    ]);
    for (const drip of drips) clearInterval(drip);
    expect(typeof took === 'number' && took >= BOUND - 50 && took < BOUND + 3_000, String(took)).toBe(true);
    expect(await upload).toMatch(/^cut/);
    expect(await headers).toBe('cut');
    expect(server.server.db?.open).toBe(false);
    expect(logged.join('\n')).toContain(
      `closing: cut 2 connection(s) still open ${BOUND / 1000} s after the stop began`,
    );
    // (The cut upload removes its temporary file as it fails; a restart would sweep it too.)
    await vi.waitFor(() => expect(readdirSync(join(server.dataDir, 'archives', '.tmp'))).toEqual([]), {
      timeout: 2_000,
      interval: 20,
    });

    const again = await startServer({ dataDir: server.dataDir, adminToken: server.adminToken });
    const versions = await fetch(`${again.url}/nodes/trickle/versions`, {
      headers: { authorization: `Bearer ${alice.token}` },
    }).then((res) => res.json() as Promise<{ version: string; status: string; archive_sha256?: string }[]>);
    expect(versions.map((v) => [v.version, v.status, v.archive_sha256 !== undefined])).toEqual([
      ['1.0.0', 'NodeVersionStatusPending', false],
    ]);
    const retried = await uploadTo(published.body.signedUrl.replace(server.url, again.url), zip);
    expect(retried.status, retried.text).toBe(200);
    await again.close();
  }, 30_000);
});

// serve's SIGTERM is this close(); the bound on a stalled connection (CLOSE_STALLED_MS, 10 s in serve) set short here.
const STALLED = 1000;

describe('a graceful stop with a stalled connection', () => {
  it('lets an upload making progress finish and cuts a stalled one after the bound, nothing half-stored; after a restart the retry works', async () => {
    const logged: string[] = [];
    const server = await startServer({ closeStalled: STALLED, log: (line) => logged.push(line), accessLog: false });
    const alice = await createUser(server, 'alice');
    await createPublisher(server, alice, 'grace');
    const signedUrl = async (version: string) => {
      const published = await publish(server, alice.token, 'grace', 'slow-node', version);
      expect(published.status, published.text).toBe(201);
      return published.body.signedUrl as string;
    };
    const [stalledUrl, movingUrl] = [await signedUrl('1.0.0'), await signedUrl('1.1.0')];
    const zip = await makeZip({
      'pyproject.toml': '[project]\nname = "slow-node"\nversion = "1.0.0"\n',
      'slow_node/data.bin': randomBytes(100_000),
    });
    /** A PUT of `zip` whose body is written by `send`; resolves to the answer, or to the error that ended it. */
    const put = (url: string, send: (req: ClientRequest) => void) =>
      new Promise<{ status?: number; error?: string }>((resolve) => {
        const req = request(url, {
          method: 'PUT',
          headers: { 'content-type': 'application/zip', 'content-length': zip.length },
        });
        req.on('response', (res) => res.resume().on('end', () => resolve({ status: res.statusCode })));
        req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
        req.flushHeaders();
        send(req);
      });
    // Half, then nothing more.
    const stalled = put(stalledUrl, (req) => req.write(zip.subarray(0, zip.length / 2)));
    // 1 KiB every 100 ms for 3 s (longer than the bound), then the rest.
    let sent = 0;
    const moving = put(movingUrl, (req) => {
      const timer = setInterval(() => {
        if (sent < 30) return void req.write(zip.subarray(sent * 1024, ++sent * 1024));
        clearInterval(timer);
        req.end(zip.subarray(sent * 1024));
      }, 100);
    });
    await vi.waitFor(() => expect(readdirSync(join(server.dataDir, 'archives', '.tmp'))).toHaveLength(2), {
      timeout: 10_000,
      interval: 20,
    });

    const started = performance.now();
    const closed = server.close();
    expect((await stalled).status).toBeUndefined(); // cut: no answer
    const cutAfter = performance.now() - started;
    expect(cutAfter).toBeGreaterThanOrEqual(STALLED - 50);
    expect(cutAfter).toBeLessThan(STALLED + 5_000);
    expect(await moving).toEqual({ status: 200 });
    await closed;
    expect(logged.join('\n')).toContain(`closing: cut a connection that moved nothing for ${STALLED / 1000} s`);
    expect(readdirSync(join(server.dataDir, 'archives', '.tmp'))).toEqual([]);

    const again = await startServer({ dataDir: server.dataDir, adminToken: server.adminToken });
    const versions = await fetch(`${again.url}/nodes/slow-node/versions`, {
      headers: { authorization: `Bearer ${alice.token}` },
    }).then((res) => res.json() as Promise<{ version: string; status: string; archive_sha256?: string }[]>);
    expect(versions.map((v) => [v.version, v.status, v.archive_sha256 !== undefined])).toEqual([
      ['1.1.0', 'NodeVersionStatusActive', true],
      ['1.0.0', 'NodeVersionStatusPending', false],
    ]);
    expect(await put(stalledUrl.replace(server.url, again.url), (req) => req.end(zip))).toEqual({ status: 200 });
    await again.close();
  }, 30_000);

  it('cuts a connection whose request line and headers stop midway after the bound, not at the headers timeout', async () => {
    const logged: string[] = [];
    const server = await startServer({ closeStalled: STALLED, log: (line) => logged.push(line), accessLog: false });
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()).on('error', () => {}));
    socket.write('GET /healthz HTTP/1.1\r\nHost: registry\r\n'); // no blank line: the headers never end
    await new Promise<void>((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    await server.close();
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(STALLED - 50);
    expect(took).toBeLessThan(STALLED + 5_000); // the headers timeout is 60 s
    await closed;
    expect(logged.join('\n')).toContain(`closing: cut a connection that moved nothing for ${STALLED / 1000} s`);
  }, 30_000);
});
