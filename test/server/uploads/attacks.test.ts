// Hostile uploads against a registry in its own process (so its memory is its own): expired and
// tampered signatures, a signature of another version, wrong content types, truncated zips, `..`,
// absolute and drive-letter entries, zip bombs, archives over the limit, a SHA-256 mismatch, and
// clients that trickle their bytes (slowloris). Each is refused with its code, nothing is stored, the
// server's memory stays bounded, and the version still takes a good archive afterwards.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUploadUrl } from '../../../src/server/archives/signing.js';
import { loadKeys } from '../../../src/server/secrets.js';
import { tempDir, type TestServer } from '../../helpers.js';
import { call, createPublisher, createUser, expectError, publish, uploadTo, type Reply } from '../fixtures.js';
import { rawZip } from '../zip-builder.js';
import { startChild, storedZip, type ChildServer } from '../child.js';
import { figure, runs } from '../../figures.js';

const MiB = 1024 * 1024;
const MAX_ARCHIVE = 2 * MiB;
const MAX_UNPACKED = 8 * MiB;
const REQUEST_TIMEOUT = 3_000;
const SLOW_CLIENTS = runs(20, 200);

let child: ChildServer;
let server: TestServer;
let signedUrl = '';
let versionId = '';
let otherSignedUrl = '';
let uploadKey: Buffer;
let refused = 0;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  const dataDir = tempDir('nodereg-attacks-');
  child = await startChild(dataDir, {
    options: {
      log: true,
      maxArchive: MAX_ARCHIVE,
      maxUnpacked: MAX_UNPACKED,
      requestTimeout: REQUEST_TIMEOUT,
      headersTimeout: 1_500,
      // the request timeout is what is tested here: the caps on uploads in progress are upload-flood.test.ts's
      uploads: { perVersion: 1000, perPublisher: 1000, minRate: 0 },
    },
  });
  server = { url: child.url, adminToken: child.adminToken, dataDir } as TestServer;
  const owner = await createUser(server, 'attacked');
  await createPublisher(server, owner, 'target-co');
  const published = await publish(server, owner.token, 'target-co', 'target', '1.0.0');
  signedUrl = published.body.signedUrl;
  versionId = published.body.node_version.id;
  otherSignedUrl = (await publish(server, owner.token, 'target-co', 'other', '1.0.0')).body.signedUrl;
  uploadKey = loadKeys(dataDir).upload;
}, 60_000);

afterAll(() => child?.close());

/** Nothing of the refused upload remains: no archive recorded or stored, no temp file, no claim. */
async function expectNothingStored(): Promise<void> {
  const version = await call(server.url, 'GET', '/nodes/target/versions/1.0.0', { token: server.adminToken });
  expect(version.body.archive_sha256).toBeUndefined();
  expect(existsSync(join(server.dataDir, 'archives/target-co/target'))).toBe(false);
  // temp files go once the refusal is handled (the body may still be draining when the answer leaves)
  for (let i = 0; i < 50 && readdirSync(join(server.dataDir, 'archives/.tmp')).length > 0; i++)
    await new Promise((r) => setTimeout(r, 50));
  expect(readdirSync(join(server.dataDir, 'archives/.tmp'))).toEqual([]);
}

function refusedWith(reply: Reply, status: number, code: string): void {
  expectError(reply, status, code);
  refused++;
}

const withQuery = (url: string, change: (params: URLSearchParams) => void) => {
  const parsed = new URL(url);
  change(parsed.searchParams);
  return parsed.href;
};

describe('signatures', () => {
  it('refuses an expired URL, a tampered signature or expiry, and the URL of another version (403)', async () => {
    const zip = await storedZip({ '__init__.py': 'x = 1\n' });
    const expired = signUploadUrl(uploadKey, server.url, versionId, Date.now() - 16 * 60 * 1000);
    const reply = await uploadTo(expired, zip);
    refusedWith(reply, 403, 'forbidden');
    expect(reply.body.message).toMatch(/expired/);
    const flipped = withQuery(signedUrl, (q) =>
      q.set(
        'signature',
        q.get('signature')!.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
      ),
    );
    refusedWith(await uploadTo(flipped, zip), 403, 'forbidden');
    const extended = withQuery(signedUrl, (q) => q.set('expires', String(Number(q.get('expires')) + 86_400)));
    refusedWith(await uploadTo(extended, zip), 403, 'forbidden');
    refusedWith(
      await uploadTo(
        withQuery(signedUrl, (q) => q.delete('signature')),
        zip,
      ),
      403,
      'forbidden',
    );
    // the signature and expiry of another version, on this version's path
    const other = new URL(otherSignedUrl);
    refusedWith(await uploadTo(`${server.url}/uploads/${versionId}${other.search}`, zip), 403, 'forbidden');
    // a key other than the server's
    refusedWith(await uploadTo(signUploadUrl(randomBytes(32), server.url, versionId), zip), 403, 'forbidden');
    await expectNothingStored();
  });
});

describe('content', () => {
  it('refuses a wrong content type (415)', async () => {
    const zip = await storedZip({ '__init__.py': 'x = 1\n' });
    for (const type of [
      'text/plain',
      'application/json',
      'multipart/form-data; boundary=x',
      'application/x-zip-compressed',
      '',
    ]) {
      refusedWith(await uploadTo(signedUrl, zip, { 'content-type': type }), 415, 'unsupported_media_type');
    }
    await expectNothingStored();
  });

  it('refuses truncated zips, names with .., absolute, drive-letter and backslash paths, symlinks, and a SHA-256 mismatch (400)', async () => {
    const good = await storedZip({ 'pkg/__init__.py': 'x = 1\n', 'pkg/data.bin': randomBytes(20_000) });
    const hello = Buffer.from('print("hi")\n');
    const bad: [string, Buffer][] = [
      ['truncated', good.subarray(0, Math.floor(good.length * 0.6))],
      ['truncated to its first bytes', good.subarray(0, 10)],
      ['empty', Buffer.alloc(0)],
      ['not a zip', randomBytes(5000)],
      ['..', rawZip([{ name: '../escape.py', data: hello }])],
      ['.. inside', rawZip([{ name: 'pkg/../../escape.py', data: hello }])],
      ['absolute', rawZip([{ name: '/etc/cron.d/evil', data: hello }])],
      ['drive letter', rawZip([{ name: 'C:/Windows/evil.py', data: hello }])],
      ['backslash', rawZip([{ name: '..\\escape.py', data: hello }])],
      ['local name differs', rawZip([{ name: 'ok.py', localName: '../evil.py', data: hello }])],
      ['symlink', rawZip([{ name: 'link', data: Buffer.from('/etc/passwd'), method: 0, mode: 0o120777 }])],
    ];
    for (const [what, zip] of bad) {
      const reply = await uploadTo(signedUrl, zip);
      expect(reply.status, `${what}: ${reply.text}`).toBe(400);
      refusedWith(reply, 400, 'invalid_request');
    }
    refusedWith(
      await uploadTo(signedUrl, good, { 'x-content-sha256': sha256(Buffer.from('other bytes')) }),
      400,
      'invalid_request',
    );
    await expectNothingStored();
  });

  it('refuses zip bombs (400) with the server memory bounded', async () => {
    const before = await child.memory();
    // 64 MiB of zeros deflate to ~64 KiB: far over --max-unpacked once inflated
    const zeros = deflateRawSync(Buffer.alloc(64 * MiB));
    const honest = rawZip([
      { name: 'zeros.bin', data: Buffer.alloc(0), compressed: zeros, uncompressedSize: 64 * MiB, crc: 0 },
    ]);
    const lying = rawZip([
      { name: 'small.txt', data: Buffer.alloc(0), compressed: zeros, uncompressedSize: 100, crc: 0 },
    ]);
    const many = rawZip(
      Array.from({ length: 200 }, (_, i) => ({
        name: `f${i}.bin`,
        data: Buffer.alloc(0),
        compressed: deflateRawSync(Buffer.alloc(MiB)),
        uncompressedSize: MiB,
        crc: 0,
      })),
    );
    for (const bomb of [honest, lying, many]) {
      expect(bomb.length).toBeLessThan(MAX_ARCHIVE);
      const reply = await uploadTo(signedUrl, bomb);
      refusedWith(reply, 400, 'invalid_request');
    }
    const after = await child.memory();
    expect(after.rss - before.rss, `RSS grew by ${((after.rss - before.rss) / MiB).toFixed(1)} MiB`).toBeLessThan(
      50 * MiB,
    );
    await expectNothingStored();
  });

  it('refuses an archive over --max-archive (413), announced or streamed, with the server memory bounded', async () => {
    const before = await child.memory();
    const big = await storedZip({ 'big.bin': randomBytes(MAX_ARCHIVE + MiB) });
    refusedWith(await uploadTo(signedUrl, big), 413, 'payload_too_large');
    // chunked: no Content-Length, the limit is found while reading
    const streamed = await new Promise<Reply>((resolve, reject) => {
      const url = new URL(signedUrl);
      const req = request(
        url,
        { method: 'PUT', headers: { 'content-type': 'application/zip', 'transfer-encoding': 'chunked' } },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode!, headers: new Headers(), body: JSON.parse(text), text }),
          );
        },
      );
      req.on('error', reject);
      for (let i = 0; i < big.length; i += 64 * 1024) req.write(big.subarray(i, i + 64 * 1024));
      req.end();
    });
    refusedWith(streamed, 413, 'payload_too_large');
    const after = await child.memory();
    expect(after.rss - before.rss, `RSS grew by ${((after.rss - before.rss) / MiB).toFixed(1)} MiB`).toBeLessThan(
      50 * MiB,
    );
    await expectNothingStored();
  });
});

describe('slow clients', () => {
  /** Sends the headers and a first few bytes, then one byte every `everyMs`, until the server ends it; returns what it answered. */
  function trickle(path: string, declared: number, everyMs: number): Promise<string> {
    return new Promise((resolve) => {
      const url = new URL(server.url);
      const socket = connect(Number(url.port), url.hostname);
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(timer);
        resolve(answer);
      });
      socket.write(
        `PUT ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/zip\r\nContent-Length: ${declared}\r\n\r\nPK\x03\x04`,
      );
      const timer = setInterval(() => socket.writable && socket.write('x'), everyMs);
    });
  }

  it(`cuts ${SLOW_CLIENTS} uploads trickled at once with 408 once the request timeout passes; memory stays bounded and others are served meanwhile`, {
    timeout: 60_000,
  }, async () => {
    const path = new URL(signedUrl).pathname + new URL(signedUrl).search;
    const before = await child.memory();
    const answers = Promise.all(Array.from({ length: SLOW_CLIENTS }, () => trickle(path, 1_000_000, 200)));
    // while they trickle, the server answers everyone else
    await new Promise((r) => setTimeout(r, REQUEST_TIMEOUT / 2));
    expect((await call(server.url, 'GET', '/healthz')).status).toBe(200);
    expect((await call(server.url, 'GET', '/nodes')).status).toBe(200);
    const during = await child.memory();
    for (const answer of await answers) {
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error).toBe('request_timeout');
      refused++;
    }
    expect(during.rss - before.rss, `RSS grew by ${((during.rss - before.rss) / MiB).toFixed(1)} MiB`).toBeLessThan(
      50 * MiB,
    );
    await expectNothingStored();
  });

  it('cuts headers sent too slowly with 408', async () => {
    const answer = await new Promise<string>((resolve) => {
      const url = new URL(server.url);
      const socket = connect(Number(url.port), url.hostname);
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(timer);
        resolve(text);
      });
      socket.write(`PUT ${new URL(signedUrl).pathname} HTTP/1.1\r\nHost: ${url.host}\r\n`);
      const timer = setInterval(() => socket.writable && socket.write('X-Slow: y\r\n'), 200);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    refused++;
  });
});

describe('after the attacks', () => {
  it('the version still takes a good archive, no internal error was logged, and the server is alive', async () => {
    const zip = await storedZip({ '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n' });
    const reply = await uploadTo(signedUrl, zip);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.archive_sha256).toBe(sha256(zip));
    expect(child.alive()).toBe(true);
    expect(
      child
        .stderr()
        .split('\n')
        .filter((line) => /internal error| 5\d\d [\d.]+ms /.test(line)),
    ).toEqual([]);
    figure(
      'attacks.uploads_refused',
      refused,
      `signatures, content types, zips, bombs, over-limit, ${SLOW_CLIENTS} slowloris clients`,
    );
  });
});
