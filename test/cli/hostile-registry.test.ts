// The CLI against a hostile registry on 127.0.0.1: names it answers must not lead a file out of the
// directory given, answers must not fill the publisher's memory, and text it sends must not drive the
// terminal. Each answer here is one a registry could send on purpose.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { table } from '../../src/cli/output.js';
import { downloadResults } from '../../src/cli/ai-results.js';
import { AI_RESULT_MAX, REGISTRY_ANSWER_MAX } from '../../src/shared/tuning.js';
import { tempDir } from '../helpers.js';
import { runInProcess } from './in-process.js';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done).closeAllConnections())));
});

async function registry(handler: (req: IncomingMessage, res: ServerResponse, base: string) => void): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    handler(req, res, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, body: unknown) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const zip = (): Promise<Buffer> =>
  new Promise((resolve) => {
    const archive = new yazl.ZipFile();
    archive.addBuffer(Buffer.from('x = 1\n'), 'node.py');
    const chunks: Buffer[] = [];
    archive.outputStream.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks)));
    archive.end();
  });

/** Writes `chunk` again and again (up to 4 GiB) until the client hangs up, telling `sent` each time. */
function endless(res: ServerResponse, chunk: Buffer, sent: (bytes: number) => void): void {
  let total = 0;
  const pump = () => {
    while (!res.destroyed && total < 4096 * 1024 * 1024) {
      total += chunk.length;
      sent(chunk.length);
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  pump();
}

const cli = (url: string, argv: string[]) =>
  runInProcess(argv, { env: { NODEREG_REGISTRY: url, NODEREG_TOKEN: 'nrg_u_test' } });

/** Every file under `dir`, relative. */
const filesUnder = (dir: string) => readdirSync(dir, { recursive: true }).map(String).sort();

describe('a hostile registry', () => {
  it('node download: a version that is a path (../../x) is refused, and nothing is written anywhere', async () => {
    const bytes = await zip();
    const root = tempDir('nodereg-hostile-');
    const out = join(root, 'a', 'b', 'out');
    mkdirSync(out, { recursive: true });
    const url = await registry((req, res, base) => {
      if (req.url!.startsWith('/archives/'))
        return void res.writeHead(200, { 'content-type': 'application/zip' }).end(bytes);
      json(res, {
        id: 'v',
        node_id: 'x',
        version: '../../../escaped',
        status: 'NodeVersionStatusActive',
        downloadUrl: `${base}/archives/p/x/1.0.0/node.zip`,
        archive_sha256: createHash('sha256').update(bytes).digest('hex'),
        archive_size: bytes.length,
      });
    });
    const result = await cli(url, ['node', 'download', 'x', '--out', out]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('the registry answered a version that is not one: "../../../escaped"');
    expect(filesUnder(root)).toEqual(['a', join('a', 'b'), join('a', 'b', 'out')]);
  });

  it('node download: stops at the size the registry announced, rather than writing an endless body to disk', async () => {
    const bytes = await zip();
    const out = tempDir('nodereg-hostile-');
    let sent = 0;
    const url = await registry((req, res, base) => {
      if (!req.url!.startsWith('/archives/')) {
        return json(res, {
          id: 'v',
          node_id: 'x',
          version: '1.0.0',
          status: 'NodeVersionStatusActive',
          downloadUrl: `${base}/archives/p/x/1.0.0/node.zip`,
          archive_size: bytes.length,
        });
      }
      res.writeHead(200, { 'content-type': 'application/zip' });
      endless(res, Buffer.alloc(1024 * 1024), (bytes) => {
        sent += bytes;
      });
    });
    const result = await cli(url, ['node', 'download', 'x', '--out', out]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`the download is larger than the ${bytes.length} bytes the registry announced`);
    expect(filesUnder(out)).toEqual([]);
    expect(sent).toBeLessThan(256 * 1024 * 1024);
  });

  it('relight --output DIR: a task id that is a path names a file inside DIR', async () => {
    const root = tempDir('nodereg-hostile-');
    const out = join(root, 'results');
    const image = join(root, 'in.png');
    writeFileSync(image, 'png');
    const id = '../../../escaped';
    const url = await registry((req, res, base) => {
      if (req.url === '/result.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end('png');
      json(res, { data: { task_id: id, status: 'COMPLETED', generated: [`${base}/result.png`] } });
    });
    const result = await cli(url, ['relight', image, '--output', `${out}/`]);
    expect(result.code, result.stderr).toBe(0);
    expect(filesUnder(root)).toEqual(['in.png', 'results', join('results', 'relight-.._.._.._escaped.png')]);
  });

  it('relight --output: a result announced over AI_RESULT_MAX is refused at once, nothing written', async () => {
    const root = tempDir('nodereg-hostile-');
    const image = join(root, 'in.png');
    writeFileSync(image, 'png');
    const url = await registry((req, res, base) => {
      // announces 2 GiB, sends a byte and stalls
      if (req.url === '/result.png')
        return void res
          .writeHead(200, { 'content-type': 'image/png', 'content-length': String(2 * 1024 ** 3) })
          .write('p');
      json(res, { data: { task_id: 't', status: 'COMPLETED', generated: [`${base}/result.png`] } });
    });
    const started = Date.now();
    const result = await cli(url, ['relight', image, '--output', join(root, 'out.png')]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(
      `/result.png: it is over ${AI_RESULT_MAX / 1024 / 1024} MiB, more than an AI result`,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(filesUnder(root)).toEqual(['in.png']);
  });

  it('an endless AI result stops at the limit and leaves no file, rather than filling the disk', async () => {
    const out = tempDir('nodereg-hostile-');
    let sent = 0;
    const url = await registry((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      endless(res, Buffer.alloc(64 * 1024), (bytes) => {
        sent += bytes;
      });
    });
    const state = { id: 't', status: 'COMPLETED', results: [`${url}/result.png`], done: true, failed: false };
    await expect(
      downloadResults('relight', state, join(out, 'out.png'), new PassThrough(), 1024 * 1024),
    ).rejects.toThrow('it is over 1 MiB, more than an AI result');
    expect(filesUnder(out)).toEqual([]);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('--output -: several results are refused (exit 2) before any download; an endless one stops at the limit', async () => {
    let requests = 0;
    let sent = 0;
    const url = await registry((_req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'image/png' });
      endless(res, Buffer.alloc(64 * 1024), (bytes) => {
        sent += bytes;
      });
    });
    const written: Buffer[] = [];
    const sink = new PassThrough().on('data', (chunk: Buffer) => written.push(chunk));
    const two = { id: 't', status: 'COMPLETED', results: [`${url}/1.png`, `${url}/2.png`], done: true, failed: false };
    await expect(downloadResults('relight', two, '-', sink, 1024 * 1024)).rejects.toMatchObject({
      exitCode: 2,
      message: '--output - writes one result to stdout; relight task t has 2',
    });
    expect(requests).toBe(0);
    const one = { ...two, results: [`${url}/1.png`] };
    await expect(downloadResults('relight', one, '-', sink, 1024 * 1024)).rejects.toThrow(
      'it is over 1 MiB, more than an AI result',
    );
    expect(Buffer.concat(written).length).toBeLessThanOrEqual(1024 * 1024);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('stops reading an answer over REGISTRY_ANSWER_MAX: exit 1 with words, not an out-of-memory crash', async () => {
    let sent = 0;
    const url = await registry((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.from(`"${'a'.repeat(1024 * 1024 - 3)}",`);
      res.write('[');
      const pump = () => {
        while (!res.destroyed && sent < 4096 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    });
    const result = await cli(url, ['node', 'versions', 'x']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('its answer is over 64 MiB, more than a registry sends');
    expect(sent).toBeLessThan(REGISTRY_ANSWER_MAX + 64 * 1024 * 1024);
  });

  it('names a redirect to another scheme or a loop, instead of failing inside Node or reading a 302 as JSON', async () => {
    const toFile = await registry((_req, res) => void res.writeHead(302, { location: 'file:///etc/passwd' }).end());
    const file = await cli(toFile, ['node', 'show', 'x']);
    expect(file.code).toBe(1);
    expect(file.stderr).toContain('it redirects to file: URL, not an http(s) one');
    const loop = await registry((req, res) => void res.writeHead(302, { location: req.url }).end());
    const looped = await cli(loop, ['node', 'versions', 'x']);
    expect(looped.code).toBe(1);
    expect(looped.stderr).toContain('it redirects more than 5 times');
  });

  it('escapes control and bidi characters in what it shows, on stdout and in progress lines on stderr', async () => {
    const evil = 'a\x1b]0;title\x07\x1b[2J\u202eb\u2066c\x9bd';
    const url = await registry((req, res, base) => {
      if (req.url === '/result.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end('png');
      json(res, { data: { task_id: evil, status: `COMPLETED`, generated: [`${base}/result.png`] } });
    });
    const image = join(tempDir('nodereg-hostile-'), 'in.png');
    writeFileSync(image, 'png');
    const result = await cli(url, ['relight', image, '--wait']);
    expect(result.code, result.stderr).toBe(0);
    const shown = result.stdout + result.stderr;
    expect(shown).toContain('a\\x1b]0;title\\x07\\x1b[2J\\u202eb\\u2066c\\x9bd');
    expect(shown).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
  });

  it('--json: C1 and bidi controls are written as \\u escapes (JSON.stringify leaves them raw), the same document', async () => {
    const evil = 'a\u202eb\x9bc\x7fd\u2066e é';
    const url = await registry((_req, res) => json(res, { data: { task_id: evil, status: 'CREATED' } }));
    const result = await runInProcess(['task', 'status', 'relight', 'abc', '--json'], {
      env: { NODEREG_REGISTRY: url, NODEREG_TOKEN: 'nrg_u_test' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('"task_id": "a\\u202eb\\u009bc\\u007fd\\u2066e é"');
    expect(JSON.parse(result.stdout).data.task_id).toBe(evil);
  });

  it('lays out a table of a million rows (a registry may send that many versions)', () => {
    const rows = Array.from({ length: 1_000_000 }, (_, i) => [String(i), 'x']);
    expect(table(rows, ['N', 'X']).split('\n')[1]).toBe('0       x');
  });
});
