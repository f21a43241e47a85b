// A registry that mirrors another (serve --upstream): a node only upstream holds installs through it,
// by our CLI and by the incumbent's install calls, with the same bytes; the second install is served
// from the mirror's own storage.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { runInProcess } from '../cli/in-process.js';
import { call, createPat, createPublisher, createUser, makeZip, publishAndUpload } from '../server/fixtures.js';

describe('a registry mirroring another registry', () => {
  let upstream: TestServer;
  let mirror: TestServer;
  const upstreamRequests: string[] = [];
  let zip: Buffer;

  beforeAll(async () => {
    upstream = await startServer({ accessLog: (line) => upstreamRequests.push(line) });
    const owner = await createUser(upstream);
    await createPublisher(upstream, owner, 'public-pub');
    const pat = await createPat(upstream, owner, 'public-pub');
    zip = await makeZip({ '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n', 'glow.py': '# upstream glow\n' });
    await publishAndUpload(upstream, pat, 'public-pub', 'glow-fx', '1.0.0', {}, zip);
    await publishAndUpload(upstream, pat, 'public-pub', 'cli-pack', '2.1.0', {}, zip);
    await publishAndUpload(upstream, pat, 'public-pub', 'replay-pack', '3.0.0', {}, zip);
    mirror = await startServer({ upstream: { url: upstream.url, timeoutMs: 5000 } });
  });
  afterAll(async () => {
    await mirror?.close();
    await upstream?.close();
  });

  /** A GET exactly as the incumbent's HTTP library sends it (python-requests), the body's bytes as received. */
  const replay = (path: string): Promise<Buffer> => {
    const url = new URL(path, mirror.url);
    const headers = {
      'User-Agent': 'python-requests/2.32.3',
      'Accept-Encoding': 'gzip, deflate',
      Accept: '*/*',
      Connection: 'keep-alive',
    };
    return new Promise((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          res.statusCode === 200 && !res.headers['content-encoding']
            ? resolve(Buffer.concat(chunks))
            : reject(new Error(`${path}: ${res.statusCode} ${res.headers['content-encoding'] ?? ''}`)),
        );
      });
      req.on('error', reject);
      req.end();
    });
  };

  const upstreamHits = (path: string) => upstreamRequests.filter((line) => line.includes(path)).length;

  it('answers a node only upstream holds, marked as upstream, with download URLs that point at itself', async () => {
    const node = await call(mirror.url, 'GET', '/nodes/glow-fx');
    expect(node.status, node.text).toBe(200);
    expect(node.body.origin).toBe('upstream');
    expect(node.headers.get('x-nodereg-origin')).toBe('upstream');
    expect(node.body.latest_version.version).toBe('1.0.0');
    expect(node.body.latest_version.downloadUrl.startsWith(`${mirror.url}/`)).toBe(true);
    const versions = await call(mirror.url, 'GET', '/nodes/glow-fx/versions');
    expect(versions.status).toBe(200);
    expect(versions.body.map((v: { downloadUrl: string }) => v.downloadUrl.startsWith(mirror.url))).toEqual([true]);
  });

  it("installs by the incumbent's calls (install, then its download URL) with upstream's bytes; the second install never reaches upstream", async () => {
    // comfy-cli's install: GET /nodes/{id}/install?version=…, then GET the downloadUrl it names.
    const install = await call(mirror.url, 'GET', '/nodes/glow-fx/install?version=1.0.0');
    expect(install.status, install.text).toBe(200);
    const url = new URL(install.body.downloadUrl);
    expect(url.origin).toBe(mirror.url);
    const first = await fetch(url);
    expect(first.status).toBe(200);
    expect(Buffer.from(await first.arrayBuffer()).equals(zip)).toBe(true);
    const archivePath = '/archives/public-pub/glow-fx/1.0.0/node.zip';
    const fetched = upstreamHits(archivePath);
    expect(fetched).toBe(1);
    const before = upstreamRequests.length;
    const again = await call(mirror.url, 'GET', '/nodes/glow-fx/install?version=1.0.0');
    const second = await fetch(again.body.downloadUrl);
    expect(Buffer.from(await second.arrayBuffer()).equals(zip)).toBe(true);
    expect(upstreamRequests.slice(before)).toEqual([]);
    // the pinned sha256 is announced once the archive is kept
    expect(again.body.archive_sha256).toBe(second.headers.get('etag')?.replaceAll('"', ''));
  });

  it('downloads through the mirror with `nodereg node download`, bytes identical; the second never reaches upstream', async () => {
    const download = async () => {
      const out = join(tempDir(), 'pack.zip');
      const result = await runInProcess(['--registry', mirror.url, 'node', 'download', 'cli-pack', '--out', out]);
      expect(result.code, result.stderr).toBe(0);
      return readFileSync(out);
    };
    expect((await download()).equals(zip)).toBe(true);
    expect(upstreamHits('/archives/public-pub/cli-pack/2.1.0/node.zip')).toBe(1);
    const before = upstreamRequests.length;
    expect((await download()).equals(zip)).toBe(true);
    expect(upstreamRequests.slice(before)).toEqual([]);
  });

  it("installs by a wire replay of the incumbent's requests (its headers, nothing added but Host), bytes identical", async () => {
    const install = JSON.parse((await replay('/nodes/replay-pack/install?version=3.0.0')).toString('utf8'));
    expect(install.version).toBe('3.0.0');
    expect((await replay(install.downloadUrl)).equals(zip)).toBe(true);
    const before = upstreamRequests.length;
    const again = JSON.parse((await replay('/nodes/replay-pack/install?version=3.0.0')).toString('utf8'));
    expect((await replay(again.downloadUrl)).equals(zip)).toBe(true);
    expect(upstreamRequests.slice(before)).toEqual([]);
  });

  it('answers 404 in the error shape for a node neither registry holds', async () => {
    const missing = await call(mirror.url, 'GET', '/nodes/nowhere-pack');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('not_found');
    expect(missing.body.message).toContain(upstream.url);
  });

  it('serves its own nodes without asking upstream', async () => {
    const owner = await createUser(mirror);
    await createPublisher(mirror, owner, 'studio');
    const pat = await createPat(mirror, owner, 'studio');
    await publishAndUpload(mirror, pat, 'studio', 'studio-tools', '1.0.0');
    const before = upstreamRequests.length;
    expect((await call(mirror.url, 'GET', '/nodes/studio-tools')).status).toBe(200);
    expect((await call(mirror.url, 'GET', '/nodes/studio-tools/versions/9.9.9')).status).toBe(404);
    expect(upstreamRequests.slice(before)).toEqual([]);
  });
});
