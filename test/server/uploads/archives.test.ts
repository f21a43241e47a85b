// The archive pipeline: signed upload URLs, the local archive storage, and zip validation.
// Malicious zips are written byte by byte (yazl refuses to write them).
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer as readAll } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { UPLOAD_URL_TTL_SECONDS } from '../../../src/shared/tuning.js';
import { signUploadUrl, verifyUploadSignature } from '../../../src/server/archives/signing.js';
import { createS3ArchiveStorage, SPOOL_PREFIX, STALE_SPOOL_MS } from '../../../src/server/archives/s3-storage.js';
import {
  ArchiveExistsError,
  createLocalArchiveStorage,
  type ArchiveStorage,
} from '../../../src/server/archives/storage.js';
import {
  MemoryBudget,
  UPLOAD_MEMORY_MAX,
  validateZip as validateZipWith,
} from '../../../src/server/archives/validate-zip.js';
import { HttpError } from '../../../src/server/errors.js';
import { tempDir } from '../../helpers.js';
import { testS3 } from '../../s3.js';
import { rawZip } from '../zip-builder.js';

/** The receive buffers' budget, as a server's. */
const receiveMemory = new MemoryBudget(UPLOAD_MEMORY_MAX);

const MiB = 1024 * 1024;

describe('signed upload URLs', () => {
  const key = randomBytes(32);
  const now = Date.UTC(2026, 10, 22, 12, 0, 0);

  function parse(url: string) {
    const parsed = new URL(url);
    return { parsed, expires: parsed.searchParams.get('expires')!, signature: parsed.searchParams.get('signature')! };
  }

  it('builds {public-url}/uploads/{id}?expires&signature, valid for the TTL', () => {
    const url = signUploadUrl(key, 'http://127.0.0.1:4880/', 'v-123', now);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:4880\/uploads\/v-123\?expires=\d+&signature=[0-9a-f]{64}$/);
    const { expires, signature } = parse(url);
    expect(Number(expires)).toBe(now / 1000 + UPLOAD_URL_TTL_SECONDS);
    expect(verifyUploadSignature(key, 'v-123', expires, signature, now)).toBe('ok');
    expect(verifyUploadSignature(key, 'v-123', expires, signature, now + (UPLOAD_URL_TTL_SECONDS - 1) * 1000)).toBe(
      'ok',
    );
  });

  it('signs the route path, not the public-url prefix', () => {
    const url = signUploadUrl(key, 'https://example.test/registry', 'abc', now);
    expect(url.startsWith('https://example.test/registry/uploads/abc?')).toBe(true);
    const { expires, signature } = parse(url);
    const expected = createHmac('sha256', key).update(`PUT\n/uploads/abc\n${expires}`).digest('hex');
    expect(signature).toBe(expected);
  });

  it('is expired once the TTL has passed', () => {
    const { expires, signature } = parse(signUploadUrl(key, 'http://h', 'v1', now));
    expect(verifyUploadSignature(key, 'v1', expires, signature, now + UPLOAD_URL_TTL_SECONDS * 1000)).toBe('expired');
    expect(verifyUploadSignature(key, 'v1', expires, signature, now + 3600_000)).toBe('expired');
  });

  it('refuses another version, another key, and any tampering', () => {
    const { expires, signature } = parse(signUploadUrl(key, 'http://h', 'v1', now));
    expect(verifyUploadSignature(key, 'v2', expires, signature, now)).toBe('invalid');
    expect(verifyUploadSignature(randomBytes(32), 'v1', expires, signature, now)).toBe('invalid');
    expect(verifyUploadSignature(key, 'v1', String(Number(expires) + 3600), signature, now)).toBe('invalid');
    const flipped = (signature[0] === '0' ? '1' : '0') + signature.slice(1);
    expect(verifyUploadSignature(key, 'v1', expires, flipped, now)).toBe('invalid');
    expect(verifyUploadSignature(key, 'v1', expires, signature.slice(2), now)).toBe('invalid');
    expect(verifyUploadSignature(key, 'v1', '', '', now)).toBe('invalid');
    expect(verifyUploadSignature(key, 'v1', '1e20', signature, now)).toBe('invalid');
    expect(verifyUploadSignature(key, 'v1', expires, 'z'.repeat(64), now)).toBe('invalid');
  });
});

/** A readable of `count` chunks of `chunk`, counting how many were pulled. */
function chunked(chunk: Buffer, count: number) {
  const state = { pulled: 0 };
  const stream = Readable.from(
    (function* () {
      for (let i = 0; i < count; i++) {
        state.pulled++;
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
  return { stream, state };
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

interface StorageBackend {
  name: string;
  /** A fresh, empty storage and the dir its uploads are spooled in. */
  open(): Promise<{ storage: ArchiveStorage; spoolDir: string }>;
}

const s3Server = testS3();
const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});
const storages: StorageBackend[] = [
  {
    name: 'a local dir',
    async open() {
      const dir = tempDir();
      return { storage: createLocalArchiveStorage(dir), spoolDir: join(dir, '.tmp') };
    },
  },
];
if (s3Server) {
  storages.push({
    name: 'S3 (s3rver)',
    async open() {
      const s3 = await s3Server;
      const spoolDir = tempDir();
      const storage = createS3ArchiveStorage({
        bucket: await s3.bucket(),
        prefix: 'some/prefix',
        env: s3.env,
        spoolDir,
      });
      closers.push(() => storage.close?.());
      return { storage, spoolDir };
    },
  });
}

// One contract, every storage: the same tests on a local dir and on a real S3-compatible server.
describe.each(storages)('archive storage on $name', (backend) => {
  const tempFiles = (dir: string) => readdirSync(dir);
  const bytesAt = async (storage: ArchiveStorage, key: string) => readAll((await storage.open(key))!.stream);

  it('receives a stream into a temp file inside the dir, with its sha256 and size', async () => {
    const { storage, spoolDir: dir } = await backend.open();
    const data = randomBytes(300_000);
    const received = await storage.receive(
      Readable.from([data.subarray(0, 1000), data.subarray(1000)]),
      1_000_000,
      receiveMemory,
    );
    expect(received.size).toBe(data.length);
    expect(received.sha256).toBe(sha256(data));
    expect(received.tempPath.startsWith(dir)).toBe(true);
    expect(readFileSync(received.tempPath).equals(data)).toBe(true);
  });

  it('accepts a body of exactly maxBytes', async () => {
    const { storage } = await backend.open();
    const received = await storage.receive(Readable.from([Buffer.alloc(4096, 1)]), 4096, receiveMemory);
    expect(received.size).toBe(4096);
  });

  it('stops reading past maxBytes, removes the temp file and rejects with 413', async () => {
    const { storage, spoolDir: dir } = await backend.open();
    const { stream, state } = chunked(Buffer.alloc(64 * 1024, 7), 1000);
    const error = await storage.receive(stream, 100 * 1024, receiveMemory).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(413);
    expect((error as HttpError).code).toBe('payload_too_large');
    expect(tempFiles(dir)).toEqual([]);
    // backpressure and the early stop: far from all 1000 chunks were read
    expect(state.pulled).toBeLessThan(50);
    // the body is left open (paused), so an HTTP route can still answer
    expect(stream.destroyed).toBe(false);
  });

  it('over the limit, an HTTP request stays open for a 413 answer', async () => {
    const { storage, spoolDir: dir } = await backend.open();
    const server = createServer((req, res) => {
      storage.receive(req, 256 * 1024, receiveMemory).then(
        () => res.writeHead(200).end('stored'),
        (error: HttpError) => res.writeHead(error.status, { connection: 'close' }).end(error.code),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, method: 'PUT', path: '/' }, (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        // chunked, no Content-Length: only counting the bytes can find it too large
        const chunk = Buffer.alloc(64 * 1024, 1);
        let sent = 0;
        const pump = () => {
          while (sent < 8 && req.write(chunk)) sent++;
          if (sent < 8)
            req.once('drain', () => {
              sent++;
              pump();
            });
          else req.end();
        };
        pump();
      });
      expect(answer).toEqual({ status: 413, body: 'payload_too_large' });
      expect(tempFiles(dir)).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('rejects and removes the temp file when the body fails midway', async () => {
    const { storage, spoolDir: dir } = await backend.open();
    const body = Readable.from(
      (async function* () {
        yield Buffer.alloc(1000);
        throw new Error('connection reset');
      })(),
    );
    await expect(storage.receive(body, 1_000_000, receiveMemory)).rejects.toThrow(/connection reset/);
    expect(tempFiles(dir)).toEqual([]);
  });

  it('streams a large body without holding it in memory', async () => {
    const { storage } = await backend.open();
    const chunk = randomBytes(MiB);
    const before = process.memoryUsage().rss;
    const { stream } = chunked(chunk, 128);
    const received = await storage.receive(stream, 200 * MiB, receiveMemory);
    const grown = process.memoryUsage().rss - before;
    expect(received.size).toBe(128 * MiB);
    // 128 MiB went through; a wide margin still shows it was never held whole
    expect(grown).toBeLessThan(64 * MiB);
    await storage.discard(received);
    expect(existsSync(received.tempPath)).toBe(false);
  });

  it('commits into place, opens and reports existence; a second commit of the key with other bytes replaces nothing', async () => {
    const { storage, spoolDir: dir } = await backend.open();
    const key = 'pub/node/1.0.0/node.zip';
    expect(await storage.exists(key)).toBe(false);
    expect(await storage.open(key)).toBeUndefined();

    const first = randomBytes(5000);
    const r1 = await storage.receive(Readable.from([first]), 10_000, receiveMemory);
    await storage.commit(r1, key);
    expect(existsSync(r1.tempPath)).toBe(false);
    expect(await storage.exists(key)).toBe(true);
    expect((await bytesAt(storage, key)).equals(first)).toBe(true);
    const opened = (await storage.open(key))!;
    expect(opened.size).toBe(5000);
    expect((await readAll(opened.stream)).equals(first)).toBe(true);
    const part = (await storage.open(key, { start: 100, end: 1099 }))!;
    expect(part.size).toBe(5000);
    expect((await readAll(part.stream)).equals(first.subarray(100, 1100))).toBe(true);

    // Written once (DESIGN.md §16): other bytes are refused, the same bytes again are taken as a retry.
    const second = randomBytes(6000);
    const r2 = await storage.receive(Readable.from([second]), 10_000, receiveMemory);
    await expect(storage.commit(r2, key)).rejects.toBeInstanceOf(ArchiveExistsError);
    await storage.discard(r2);
    expect((await bytesAt(storage, key)).equals(first)).toBe(true);
    const again = await storage.receive(Readable.from([first]), 10_000, receiveMemory);
    await storage.commit(again, key);
    expect(existsSync(again.tempPath)).toBe(false);
    expect(tempFiles(dir)).toEqual([]);

    await storage.remove(key);
    await storage.remove(key);
    expect(await storage.exists(key)).toBe(false);
  });

  it('racing commits of the same key leave one of them whole, the others refused, and no temp file', async () => {
    const { storage, spoolDir: dir } = await backend.open();
    const bodies = Array.from({ length: 12 }, () => randomBytes(20_000));
    const received = await Promise.all(bodies.map((b) => storage.receive(Readable.from([b]), 100_000, receiveMemory)));
    const outcomes = await Promise.allSettled(received.map((r) => storage.commit(r, 'p/n/2.0.0/node.zip')));
    await Promise.all(received.map((r) => storage.discard(r)));
    const stored = await bytesAt(storage, 'p/n/2.0.0/node.zip');
    const winner = bodies.findIndex((body) => body.equals(stored));
    expect(winner).toBeGreaterThanOrEqual(0);
    // s3rver ignores If-None-Match on a PUT (S3 honours it), and writes an object's body and metadata
    // apart: there racing PUTs all land, and the last body may sit under another writer's metadata,
    // so its writer can be refused. Only a whole body and at least one accepted commit hold there.
    const local = backend.name === 'a local dir';
    if (local) expect(outcomes[winner].status).toBe('fulfilled');
    else expect(outcomes.some((outcome) => outcome.status === 'fulfilled')).toBe(true);
    const refused = local ? outcomes.filter((_, i) => i !== winner) : [];
    for (const outcome of refused) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(ArchiveExistsError);
    }
    expect(tempFiles(dir)).toEqual([]);
  });

  it('refuses keys that could leave the dir', async () => {
    const { storage } = await backend.open();
    const received = await storage.receive(Readable.from([Buffer.from('x')]), 10, receiveMemory);
    for (const key of [
      '../escape/node.zip',
      'a/../../node.zip',
      '/etc/node.zip',
      'a//b',
      'a\\..\\b',
      '.tmp/x',
      './a',
    ]) {
      await expect(storage.write(key, Buffer.from('x'), 'text/plain'), key).rejects.toThrow(/invalid archive key/);
      await expect(storage.commit(received, key), key).rejects.toThrow(/invalid archive key/);
      await expect(storage.remove(key), key).rejects.toThrow(/invalid archive key/);
      await expect(storage.exists(key), key).rejects.toThrow(/invalid archive key/);
      await expect(storage.open(key), key).rejects.toThrow(/invalid archive key/);
    }
  });

  it('writes small bytes whole at a key, replacing them, and removes them', async () => {
    const { storage, spoolDir } = await backend.open();
    const key = '_proxy-results/abc.png';
    await storage.write(key, Buffer.from('first'), 'image/png');
    await storage.write(key, Buffer.from('second!'), 'image/png');
    expect((await bytesAt(storage, key)).toString()).toBe('second!');
    // an opened archive holds its file until its stream is read or destroyed (left to the collector, Node
    // closes it with a warning: "Closing file descriptor N on garbage collection", once per test run)
    const opened = (await storage.open(key))!;
    expect(opened.size).toBe(7);
    opened.stream.destroy();
    await once(opened.stream, 'close');
    await storage.remove(key);
    expect(await storage.open(key)).toBeUndefined();
    expect(tempFiles(spoolDir)).toEqual([]);
    // no descriptor of the file is left open (a local dir's: S3's stream is a connection)
    const held = readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith(join(spoolDir, '..', key));
      } catch {
        return false; // the descriptor of the listing itself, gone
      }
    });
    expect(held).toEqual([]);
  });

  it('sweep removes temp files left by a crash', async () => {
    const { storage, spoolDir: dir } = await backend.open();
    writeFileSync(join(dir, 'left-over.part'), 'half an upload');
    const kept = await storage.receive(Readable.from([Buffer.from('zip')]), 10, receiveMemory);
    await storage.commit(kept, 'a/b/1.0.0/node.zip');
    await storage.sweep();
    expect(tempFiles(dir)).toEqual([]);
    expect(await storage.exists('a/b/1.0.0/node.zip')).toBe(true);
  });
});

if (s3Server) {
  describe('S3 archive storage timeouts', () => {
    // The S3 socket timeout is for a bucket that hangs; a download whose client reads slowly (so we stop
    // reading S3 for a while: backpressure) must not be cut by it, midway through the archive.
    it('a download read with pauses longer than the socket timeout arrives whole', async () => {
      const s3 = await s3Server;
      const storage = createS3ArchiveStorage({
        bucket: await s3.bucket(),
        prefix: '',
        env: s3.env,
        spoolDir: tempDir(),
        timeouts: { connectionTimeout: 5_000, socketTimeout: 300, bodyIdleTimeout: 300 },
      });
      closers.push(() => storage.close?.());
      const bytes = randomBytes(16 * MiB);
      await storage.commit(
        await storage.receive(Readable.from([bytes]), 32 * MiB, receiveMemory),
        'a/slow/1.0.0/node.zip',
      );
      const { stream } = (await storage.open('a/slow/1.0.0/node.zip'))!;
      const chunks: Buffer[] = [];
      let paused = false;
      for await (const chunk of stream) {
        chunks.push(chunk as Buffer);
        if (!paused) {
          paused = true; // a slow client: nothing is read for 1.5 s, five times the socket and body timeouts
          await new Promise((resolve) => setTimeout(resolve, 1_500));
        }
      }
      expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    });

    it('an object whose body stops midway while the download waits fails as the storage unavailable', async () => {
      // A stand-in S3 that answers the GET's head and 10 of its 1,000 bytes, then nothing more.
      const stalled = createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-length': '1000', 'content-type': 'application/zip' });
        res.write(Buffer.alloc(10));
      });
      stalled.listen(0, '127.0.0.1');
      await once(stalled, 'listening');
      closers.push(() => {
        stalled.closeAllConnections();
        stalled.close();
      });
      const endpoint = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
      const storage = createS3ArchiveStorage({
        bucket: 'stalled',
        prefix: '',
        env: { AWS_ENDPOINT_URL_S3: endpoint, AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' },
        spoolDir: tempDir(),
        timeouts: { bodyIdleTimeout: 300 },
      });
      closers.push(() => storage.close?.());
      const { stream } = (await storage.open('a/b/1.0.0/node.zip'))!;
      const read = await readAll(stream).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(read).toMatchObject({
        name: 'StorageUnavailableError',
        message: 'the S3 server sent nothing of a/b/1.0.0/node.zip for 0.3 s',
      });
    });
  });
}

describe('S3 archive storage spool', () => {
  // Without a spoolDir each process spools in a fresh dir of the temp dir: a killed instance's dir is
  // never its successor's, so the start sweeps the others' files that nobody has written for a day.
  it('sweep at start removes the stale scratch files of killed instances, not fresh ones of live ones', async () => {
    const tmp = tempDir();
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      const killed = join(tmp, `${SPOOL_PREFIX}killed`);
      const live = join(tmp, `${SPOOL_PREFIX}live`);
      mkdirSync(killed);
      mkdirSync(live);
      const old = new Date(Date.now() - STALE_SPOOL_MS - 60_000);
      writeFileSync(join(killed, 'a.part'), 'half an upload of a killed instance');
      utimesSync(join(killed, 'a.part'), old, old);
      writeFileSync(join(live, 'b.part'), 'an upload coming in');
      writeFileSync(join(tmp, 'other.part'), 'not ours');
      utimesSync(join(tmp, 'other.part'), old, old);
      const storage = createS3ArchiveStorage({
        bucket: 'unused',
        prefix: '',
        env: { AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9' },
      });
      await storage.sweep();
      expect(readdirSync(killed)).toEqual([]);
      expect(readdirSync(live)).toEqual(['b.part']);
      expect(existsSync(join(tmp, 'other.part'))).toBe(true);
      await storage.close?.();
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });
});

describe('local archive storage', () => {
  it('starts the sync of a received archive and commits it into place only once it is synced', async () => {
    const storage = createLocalArchiveStorage(tempDir());
    const received = await storage.receive(Readable.from([Buffer.from('zip')]), 10, receiveMemory);
    await expect(received.synced).resolves.toBeUndefined();
    let synced!: () => void;
    const key = 'a/b/1.0.0/node.zip';
    const committing = storage.commit({ ...received, synced: new Promise<void>((resolve) => (synced = resolve)) }, key);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await storage.exists(key)).toBe(false);
    synced();
    await committing;
    expect(await storage.exists(key)).toBe(true);
  });
});

// ---- zips ----

function writeTemp(data: Buffer): string {
  const path = join(tempDir(), 'node.zip');
  writeFileSync(path, data);
  return path;
}

async function yazlZip(
  files: { name: string; data: Buffer; compress?: boolean }[],
  dirs: string[] = [],
): Promise<string> {
  const zip = new yazl.ZipFile();
  for (const dir of dirs) zip.addEmptyDirectory(dir);
  for (const f of files) zip.addBuffer(f.data, f.name, { compress: f.compress ?? true, mode: 0o100644 });
  zip.end();
  const path = join(tempDir(), 'node.zip');
  await pipeline(zip.outputStream, createWriteStream(path));
  return path;
}

// Every check, on both paths: an archive read whole and checked from memory, and one read from its
// file block by block (when the memory budget has no room for it).
describe.each([
  { how: 'read whole', room: 64 * MiB },
  { how: 'read from the file', room: 0 },
])('zip validation, $how', ({ room }) => {
  const hello = Buffer.from('print("hello")\n');
  let budget: MemoryBudget;
  const validateZip = (path: string, limits: { maxUnpacked: number; maxEntries?: number }) =>
    validateZipWith(path, { ...limits, memory: (budget = new MemoryBudget(room)) });

  /** Resolves to the 400 error validateZip rejects with; all the memory it took is given back. */
  async function rejection(path: string, maxUnpacked = 100 * MiB): Promise<HttpError> {
    const error = await validateZip(path, { maxUnpacked }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    expect((error as HttpError).code).toBe('invalid_request');
    expect(budget.held).toBe(0);
    return error as HttpError;
  }

  it('accepts a valid zip and counts entries and inflated bytes', async () => {
    const big = Buffer.from('x'.repeat(200_000));
    const path = await yazlZip(
      [
        { name: 'pyproject.toml', data: Buffer.from('[project]\nname = "n"\n') },
        { name: 'src/n/__init__.py', data: hello },
        { name: 'assets/icon.png', data: randomBytes(3000), compress: false },
        { name: 'src/n/big.txt', data: big },
        { name: 'empty.txt', data: Buffer.alloc(0) },
      ],
      ['docs/'],
    );
    expect(await validateZip(path, { maxUnpacked: MiB })).toEqual({
      entries: 6,
      // the scanner reads src/n/__init__.py only, from where its data lies, and gets its bytes as checked
      scannable: [
        {
          path: 'src/n/__init__.py',
          start: expect.any(Number),
          compressedSize: expect.any(Number),
          size: hello.length,
          deflated: true,
          data: room ? hello : undefined,
        },
      ],
      // every other file, which code may load as Python (the scan reads those a scanned file loads)
      loadable: ['pyproject.toml', 'assets/icon.png', 'src/n/big.txt', 'empty.txt'].map((path) =>
        expect.objectContaining({ path }),
      ),
      unpackedSize: 21 + hello.length + 3000 + 200_000,
      release: expect.any(Function),
    });
  });

  it('refuses an archive with more entries than the limit, and takes one at the limit', async () => {
    const files = Array.from({ length: 5 }, (_, i) => ({ name: `f${i}.py`, data: hello }));
    const path = await yazlZip(files);
    expect((await validateZip(path, { maxUnpacked: MiB, maxEntries: 5 })).entries).toBe(5);
    const error = await validateZip(path, { maxUnpacked: MiB, maxEntries: 4 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).message).toMatch(/5 entries, more than the limit of 4/);
  });

  it('refuses an archive that holds no files: none at all, or directories only', async () => {
    expect((await rejection(await yazlZip([]))).message).toBe(
      'invalid archive: it holds no files (directories at most); a node archive holds at least its code',
    );
    expect((await rejection(await yazlZip([], ['docs/', 'src/']))).message).toMatch(/holds no files/);
    expect(
      (await validateZip(await yazlZip([{ name: 'empty.py', data: Buffer.alloc(0) }]), { maxUnpacked: MiB })).entries,
    ).toBe(1);
  });

  it('accepts a hand-written zip (the builder used below is sound)', async () => {
    const path = writeTemp(
      rawZip([
        { name: 'a.py', data: hello },
        { name: 'b/c.txt', data: hello, method: 0 },
        { name: 'b/', data: Buffer.alloc(0), mode: 0o40755 },
      ]),
    );
    const summary = await validateZip(path, { maxUnpacked: MiB });
    expect(summary).toMatchObject({ entries: 3, unpackedSize: 2 * hello.length });
    expect(summary.scannable.map((e) => e.path)).toEqual(['a.py']);
    // where the scan worker reads it: the raw bytes at `start` inflate to the file
    const entry = summary.scannable[0];
    const data = readFileSync(path).subarray(entry.start, entry.start + entry.compressedSize);
    expect(entry.deflated ? inflateRawSync(data) : data).toEqual(hello);
  });

  it('accepts an archive that expands to exactly the limit', async () => {
    const path = await yazlZip([{ name: 'zeros', data: Buffer.alloc(100_000) }]);
    expect((await validateZip(path, { maxUnpacked: 100_000 })).unpackedSize).toBe(100_000);
    await rejection(path, 99_999);
  });

  it.each([
    ['../evil.py', /"\.\.\/evil\.py" has a "\.\." segment/],
    ['a/../../evil.py', /"\.\." segment/],
    ['/etc/passwd', /"\/etc\/passwd" has an absolute name/],
    ['C:/Windows/evil.dll', /drive letter/],
    ['c:evil', /drive letter/],
    ['..\\evil.py', /backslash/],
    ['a\\b.py', /backslash/],
    ['', /empty name/],
  ])('refuses the entry name %j', async (name, message) => {
    const error = await rejection(
      writeTemp(
        rawZip([
          { name: 'ok.py', data: hello },
          { name, data: hello },
        ]),
      ),
    );
    expect(error.message).toMatch(message);
  });

  it('refuses duplicate names', async () => {
    const error = await rejection(
      writeTemp(
        rawZip([
          { name: 'a.py', data: hello },
          { name: 'a.py', data: hello },
        ]),
      ),
    );
    expect(error.message).toMatch(/"a\.py" appears more than once/);
    const fileAndDir = await rejection(
      writeTemp(
        rawZip([
          { name: 'a', data: hello },
          { name: 'a/', mode: 0o40755 },
        ]),
      ),
    );
    expect(fileAndDir.message).toMatch(/"a\/" appears more than once/);
  });

  it('refuses symlink entries', async () => {
    const error = await rejection(
      writeTemp(rawZip([{ name: 'link', data: Buffer.from('/etc/passwd'), method: 0, mode: 0o120777 }])),
    );
    expect(error.message).toMatch(/"link" is a symbolic link/);
  });

  it('refuses encrypted entries', async () => {
    const error = await rejection(writeTemp(rawZip([{ name: 'secret.py', data: hello, flags: 0x1 }])));
    expect(error.message).toMatch(/"secret\.py" is encrypted/);
  });

  it('refuses a bad CRC', async () => {
    const error = await rejection(
      writeTemp(
        rawZip([
          { name: 'a.py', data: hello },
          { name: 'b.py', data: hello, crc: crc32(hello) ^ 1 },
        ]),
      ),
    );
    expect(error.message).toMatch(/"b\.py" fails its CRC-32 check/);
    const stored = await rejection(writeTemp(rawZip([{ name: 'c.bin', data: hello, method: 0, crc: 12345 }])));
    expect(stored.message).toMatch(/"c\.bin" fails its CRC-32 check/);
    // an entry too large to be checked whole is streamed, and checked as well
    const large = await rejection(
      writeTemp(rawZip([{ name: 'd.bin', data: randomBytes(300_000), method: 0, crc: 12345 }])),
    );
    expect(large.message).toMatch(/"d\.bin" fails its CRC-32 check/);
  });

  it('refuses an entry whose declared size is wrong', async () => {
    const error = await rejection(
      writeTemp(rawZip([{ name: 'a.py', data: hello, uncompressedSize: hello.length + 10 }])),
    );
    expect(error.message).toMatch(/"a\.py"/);
  });

  it('refuses truncated archives', async () => {
    const whole = rawZip([
      { name: 'a.py', data: randomBytes(10_000), method: 0 },
      { name: 'b.py', data: hello },
    ]);
    await rejection(writeTemp(whole.subarray(0, whole.length - 10)));
    await rejection(writeTemp(whole.subarray(0, 5000)));
    // the central directory intact, the data cut short
    const cut = Buffer.concat([whole.subarray(0, 2000), whole.subarray(whole.length - 22 - 2 * 46 - 8)]);
    await rejection(writeTemp(cut));
  });

  it('refuses what is not a zip at all', async () => {
    const error = await rejection(writeTemp(Buffer.from('definitely not a zip file, just text')));
    expect(error.message).toMatch(/not a readable zip/);
    await rejection(writeTemp(Buffer.alloc(0)));
  });

  it('refuses a local header that names another file', async () => {
    const error = await rejection(writeTemp(rawZip([{ name: 'a.py', localName: '../a.py', data: hello }])));
    expect(error.message).toMatch(/"a\.py" has a different name in its local header/);
  });

  it('refuses compression methods other than stored and deflate', async () => {
    const error = await rejection(writeTemp(rawZip([{ name: 'a.py', data: hello, method: 12, compressed: hello }])));
    expect(error.message).toMatch(/"a\.py" uses compression method 12/);
  });

  it('refuses a zip bomb of zeros over the limit', async () => {
    // 1 MiB entries of zeros, under the total ratio's floor of 16 MiB
    const path = await yazlZip(
      Array.from({ length: 12 }, (_, i) => ({ name: `${String.fromCharCode(97 + i)}.bin`, data: Buffer.alloc(MiB) })),
    );
    expect(readFileSync(path).length).toBeLessThan(100_000);
    const error = await rejection(path, 10 * MiB);
    expect(error.message).toMatch(/expands to more than the limit of 10485760 bytes \(at entry "k\.bin"\)/);
  });

  it('refuses a bomb that lies about its size, caught as it inflates', async () => {
    const zeros = deflateRawSync(Buffer.alloc(20 * MiB));
    const lying = writeTemp(
      rawZip([{ name: 'small.txt', compressed: zeros, data: Buffer.alloc(0), uncompressedSize: 100, crc: 0 }]),
    );
    const error = await rejection(lying, 10 * MiB);
    expect(error.message).toMatch(/"small\.txt"/);
    // the same lie in an entry too large to be inflated whole: caught by the streamed check
    const noise = deflateRawSync(randomBytes(400_000));
    const lyingLarge = writeTemp(
      rawZip([{ name: 'large.txt', compressed: noise, data: Buffer.alloc(0), uncompressedSize: 100, crc: 0 }]),
    );
    expect((await rejection(lyingLarge, 10 * MiB)).message).toMatch(/"large\.txt"/);
  });
});

// What the check holds in memory (docs/decisions.md): the archive read whole while it is checked, the
// scannable entries' bytes kept for the scan, each within its bound and the process's budget.
describe('zip validation: memory and turns', () => {
  it('keeps the scannable bytes for the scan within 4 MiB per upload and within the budget, and gives all of it back', async () => {
    // 30 Python files of ~200 KB (each checked from one buffer): 6 MB of source, over an upload's share
    const files = Array.from({ length: 30 }, (_, i) => ({
      name: `m${i}.py`,
      data: Buffer.from(`# ${i}\n${'x = 1\n'.repeat(33_000)}`),
    }));
    const path = await yazlZip(files);
    for (const room of [64 * MiB, MiB]) {
      const budget = new MemoryBudget(room);
      const summary = await validateZipWith(path, { maxUnpacked: 100 * MiB, memory: budget });
      const kept = summary.scannable.filter((entry) => entry.data);
      const held = kept.reduce((sum, entry) => sum + entry.data!.buffer.byteLength, 0);
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.length).toBeLessThan(files.length);
      expect(held).toBeLessThanOrEqual(Math.min(4 * MiB, room));
      expect(budget.held).toBe(held); // the archive read whole was given back once checked
      for (const entry of kept)
        expect(Buffer.from(entry.data!).equals(files.find((f) => f.name === entry.path)!.data)).toBe(true);
      summary.release();
      expect(budget.held).toBe(0);
    }
  });

  it('an archive larger than the budget has room for is read from its file', async () => {
    const path = await yazlZip([
      { name: 'a.py', data: Buffer.from('print(1)\n') },
      { name: 'b.bin', data: randomBytes(200_000), compress: false },
    ]);
    const budget = new MemoryBudget(100_000);
    const summary = await validateZipWith(path, { maxUnpacked: MiB, memory: budget });
    expect(summary.entries).toBe(2);
    expect(summary.scannable[0].data?.toString()).toBe('print(1)\n'); // its bytes still fit
    summary.release();
    expect(budget.held).toBe(0);
  });

  it('gives other work turns while it checks an archive from memory (no I/O of its own to wait for)', async () => {
    const path = writeTemp(
      rawZip(Array.from({ length: 10_000 }, (_, i) => ({ name: `e/${i}.py`, data: Buffer.from(`x = ${i}\n`) }))),
    );
    const turns: number[] = [];
    let checking = true;
    const spin = () => {
      turns.push(performance.now());
      if (checking) setImmediate(spin);
    };
    const started = performance.now();
    setImmediate(spin);
    const summary = await validateZipWith(path, { maxUnpacked: MiB, memory: new MemoryBudget(64 * MiB) });
    checking = false;
    const took = performance.now() - started;
    expect(summary.entries).toBe(10_000);
    const gaps = turns.slice(1).map((at, i) => at - turns[i]);
    // held without a turn it would be one gap as long as the check; wide margin for a shared machine
    expect(Math.max(...gaps)).toBeLessThan(took / 4);
    summary.release();
  });
});
