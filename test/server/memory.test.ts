// Memory bounds of the archive routes, measured on a server in its own process (so its RSS is not
// vitest's): a 100 MiB upload streams to disk, and a client that reads slowly holds memory flat.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { tempDir } from '../helpers.js';
import { call, createPublisher, createUser, makeZip, publish, uploadTo } from './fixtures.js';

const MiB = 1024 * 1024;
let child: ChildProcess;
let url = '';
const adminToken = `nrg_u_admin${randomUUID().replaceAll('-', '')}`;
let zipPath = '';
let zipSha = '';
let zipSize = 0;

interface Memory {
  rss: number;
  maxRss: number;
  /** The highest RSS since the previous measure. */
  peak: number;
}
const memory = () =>
  new Promise<Memory>((done) => {
    child.once('message', (message) => done(message as Memory));
    child.send('memory');
  });

/** A zip of 100 MiB of random (incompressible) data, stored, written to disk by streaming. */
async function bigZip(dir: string): Promise<string> {
  const dataPath = join(dir, 'random.bin');
  const out = createWriteStream(dataPath);
  for (let i = 0; i < 100; i++)
    if (!out.write(randomBytes(MiB))) await new Promise<void>((r) => out.once('drain', () => r()));
  await new Promise<void>((r) => out.end(() => r()));
  const zip = new yazl.ZipFile();
  zip.addFile(dataPath, 'data/random.bin', { compress: false });
  zip.addBuffer(Buffer.from('print("big")\n'), 'big/__init__.py');
  zip.end();
  const path = join(dir, 'big.zip');
  await pipeline(zip.outputStream, createWriteStream(path));
  return path;
}

beforeAll(async () => {
  const dir = tempDir();
  zipPath = await bigZip(dir);
  zipSize = statSync(zipPath).size;
  const hash = createHash('sha256');
  await pipeline(createReadStream(zipPath), hash);
  zipSha = hash.digest('hex');

  const script = resolve(import.meta.dirname, 'child-server.js');
  child = spawn(process.execPath, ['--expose-gc', script, join(dir, 'data'), adminToken], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    cwd: resolve(import.meta.dirname, '../..'),
  });
  url = await new Promise<string>((done, fail) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) done(out.trim());
    });
    child.once('exit', (code) => fail(new Error(`the server exited with ${code}`)));
  });
}, 120_000);

afterAll(async () => {
  if (child?.connected) child.send('close');
  await new Promise((r) => child?.once('exit', r));
});

describe('memory', () => {
  it('uploads a 100 MiB archive with the server RSS growing by less than 50 MiB', async () => {
    const server = { url, adminToken } as Parameters<typeof createUser>[0];
    const owner = await createUser(server, 'big');
    await createPublisher(server, owner, 'big-co');
    // Warm up every code path with a small archive first, so the baseline is the running server's
    // (its scan worker, kept once started, included: the archive holds a Python file).
    const warmup = await publish(server, owner.token, 'big-co', 'warmup', '1.0.0');
    expect(
      (await uploadTo(warmup.body.signedUrl, await makeZip({ 'w.bin': randomBytes(MiB), 'w.py': 'import json\n' })))
        .status,
    ).toBe(200);
    // On a machine shared with other work the collector can fall behind for a while, and one upload then
    // peaks higher without any leak: it is measured again (three uploads at most) and the lowest counts.
    // A server that buffered the archive would grow by 100 MiB on every try.
    let lowest = Infinity;
    for (let attempt = 0; attempt < 3 && lowest >= 50 * MiB; attempt++) {
      const version = `1.0.${attempt}`;
      const published = await publish(server, owner.token, 'big-co', 'big-node', version);
      expect(published.status).toBe(201);
      const before = await memory();
      const reply = await new Promise<{ status: number; body: string }>((done, fail) => {
        const req = request(
          published.body.signedUrl,
          {
            method: 'PUT',
            headers: {
              'content-type': 'application/zip',
              'content-length': String(zipSize),
              'x-content-sha256': zipSha,
            },
          },
          (res) => {
            let body = '';
            res.on('data', (chunk) => (body += chunk));
            res.on('end', () => done({ status: res.statusCode!, body }));
          },
        );
        req.on('error', fail);
        createReadStream(zipPath).pipe(req);
      });
      expect(reply.status, reply.body).toBe(200);
      expect(JSON.parse(reply.body)).toMatchObject({
        status: 'NodeVersionStatusActive',
        archive_size: zipSize,
        archive_sha256: zipSha,
      });
      const after = await memory();
      lowest = Math.min(lowest, after.peak - before.rss);
    }
    expect(lowest, `RSS grew by ${(lowest / MiB).toFixed(1)} MiB`).toBeLessThan(50 * MiB);
  }, 120_000);

  it('keeps memory flat for a client that reads the archive slowly, and the bytes arrive whole', async () => {
    // Measured again on a loaded machine, as above: a server without backpressure grows by the whole
    // archive (100 MiB) on every try.
    const readSlowly = async (): Promise<number> => {
      const before = await memory();
      const response = await new Promise<IncomingMessage>((done, fail) => {
        request(`${url}/archives/big-co/big-node/1.0.0/node.zip`, (res) => done(res))
          .on('error', fail)
          .end();
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-length']).toBe(String(zipSize));
      response.pause();
      // Read nothing for a while: a server without backpressure would now read the whole file into memory.
      await new Promise((r) => setTimeout(r, 1500));
      const stalled = await memory();
      // Then read slowly, a little at a time, for a while, then the rest.
      const hash = createHash('sha256');
      let received = 0;
      const started = Date.now();
      await new Promise<void>((done, fail) => {
        response.on('error', fail);
        response.on('end', done);
        response.on('data', (chunk: Buffer) => {
          hash.update(chunk);
          received += chunk.length;
          if (Date.now() - started < 1000) {
            response.pause();
            setTimeout(() => response.resume(), 20);
          }
        });
        response.resume();
      });
      const after = await memory();
      expect(received).toBe(zipSize);
      expect(hash.digest('hex')).toBe(zipSha);
      return Math.max(stalled.rss, after.rss) - before.rss;
    };
    let lowest = Infinity;
    for (let attempt = 0; attempt < 3 && lowest >= 30 * MiB; attempt++) lowest = Math.min(lowest, await readSlowly());
    expect(lowest, `RSS grew by ${(lowest / MiB).toFixed(1)} MiB`).toBeLessThan(30 * MiB);
    expect((await call(url, 'GET', '/nodes/big-node')).body.latest_version.archive_size).toBe(zipSize);
  }, 120_000);
});
