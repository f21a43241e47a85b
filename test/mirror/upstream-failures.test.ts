// The mirror when upstream fails: hanging, answering 500, gone, breaking off a download, or offering
// other bytes for an archive already pinned. Kept answers are served (marked stale), uncached ones are
// a 504 or 502 in the error shape naming upstream, and /healthz never waits on upstream.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { latency } from '../figures.js';
import { startServer, type TestServer } from '../helpers.js';
import { call, createPat, createPublisher, createUser, makeZip, publishAndUpload } from '../server/fixtures.js';
import { startStandIn, type StandIn } from './stand-in.js';

let standIn: StandIn | undefined;
let mirror: TestServer | undefined;
afterEach(async () => {
  await mirror?.close();
  await standIn?.close().catch(() => {});
  mirror = standIn = undefined;
});

/** A stand-in holding `glow-fx` 1.0.0 and `blur-fx` 1.0.0, and a mirror of it whose kept answers are always due a refresh. */
async function setUp(log: string[] = []) {
  standIn = await startStandIn();
  const zip = await makeZip({ '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n' });
  standIn.nodes.set('glow-fx', { publisher: 'lumen', versions: [{ version: '1.0.0', zip }] });
  standIn.nodes.set('blur-fx', { publisher: 'lumen', versions: [{ version: '1.0.0', zip }] });
  mirror = await startServer({
    upstream: { url: standIn.url, ttlMs: 0, deadlineMs: 200, timeoutMs: 1500 },
    log: (line) => log.push(line),
  });
  return { standIn, mirror, zip };
}

async function download(server: TestServer, nodeId: string) {
  const install = await call(server.url, 'GET', `/nodes/${nodeId}/install`);
  if (install.status !== 200) return { install, status: install.status, bytes: undefined };
  const archive = await fetch(install.body.downloadUrl);
  return { install, status: archive.status, bytes: Buffer.from(await archive.arrayBuffer()), headers: archive.headers };
}

describe('the mirror when upstream fails', () => {
  it('serves cached nodes with a stale header once upstream is gone; an uncached one is a 504 naming upstream', async () => {
    const { standIn, mirror, zip } = await setUp();
    expect((await download(mirror, 'glow-fx')).bytes?.equals(zip)).toBe(true);
    await standIn.close();
    const again = await download(mirror, 'glow-fx');
    expect(again.status).toBe(200);
    expect(again.bytes?.equals(zip)).toBe(true);
    expect(again.install.headers.get('x-nodereg-stale')).toMatch(/^\d{4}-/);
    const uncached = await call(mirror.url, 'GET', '/nodes/blur-fx');
    expect(uncached.status).toBe(504);
    expect(uncached.body.error).toBe('upstream_timeout');
    expect(uncached.body.message).toContain(standIn.url);
    // "quickly": a stopped upstream refuses the connection, so the 504 waits on no timeout (bench/latency.js holds the figure)
    const took: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      expect((await call(mirror.url, 'GET', `/nodes/gone-${i}`)).status).toBe(504);
      took.push(performance.now() - started);
    }
    latency('mirror.uncached_504_upstream_stopped_max_ms', took, 1);
  });

  it('answers /healthz while upstream hangs, and the uncached read then a 504', async () => {
    const { standIn, mirror } = await setUp();
    standIn.mode = 'hang';
    const pending = call(mirror.url, 'GET', '/nodes/blur-fx');
    await vi.waitFor(() => expect(standIn.requests).toContain('GET /nodes/blur-fx'));
    const took: number[] = [];
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      expect((await call(mirror.url, 'GET', '/healthz')).status).toBe(200);
      took.push(performance.now() - started);
    }
    latency('mirror.healthz_upstream_hangs_max_ms', took, 1);
    expect(await Promise.race([pending.then(() => 'answered'), Promise.resolve('waiting')])).toBe('waiting');
    const uncached = await pending;
    expect(uncached.status).toBe(504);
    expect(uncached.body.error).toBe('upstream_timeout');
  });

  it('serves a cached node while upstream hangs or answers 500; an uncached one is a 502 on a 500', async () => {
    const { standIn, mirror } = await setUp();
    expect((await download(mirror, 'glow-fx')).status).toBe(200);
    for (const mode of ['hang', '500'] as const) {
      standIn.mode = mode;
      const cached = await call(mirror.url, 'GET', '/nodes/glow-fx');
      expect(cached.status, mode).toBe(200);
      expect(cached.headers.get('x-nodereg-stale'), mode).toBeTruthy();
    }
    const uncached = await call(mirror.url, 'GET', '/nodes/blur-fx');
    expect(uncached.status).toBe(502);
    expect(uncached.body.error).toBe('upstream_error');
  });

  it('refuses and logs other bytes for a pinned archive, and serves the pinned one', async () => {
    const log: string[] = [];
    const { standIn, mirror, zip } = await setUp(log);
    standIn.declareSha = true;
    expect((await download(mirror, 'glow-fx')).bytes?.equals(zip)).toBe(true);
    const other = await makeZip({ '__init__.py': 'import os  # other bytes\n' });
    standIn.nodes.get('glow-fx')!.versions[0]!.zip = other;
    // a refresh reads the new sha256 upstream declares (in the background when slower than the deadline)
    await call(mirror.url, 'GET', '/nodes/glow-fx');
    await vi.waitFor(() =>
      expect(log.some((line) => line.includes('other bytes for glow-fx 1.0.0') && line.includes('refused'))).toBe(true),
    );
    const again = await download(mirror, 'glow-fx');
    expect(again.bytes?.equals(zip)).toBe(true);
    expect(again.install.body.archive_sha256).not.toBe(undefined);
    // without the pinned file (lost), the new bytes are fetched, refused, never served
    rmSync(join(mirror.dataDir, 'archives/_mirror/archives/glow-fx/1.0.0/node.zip'));
    standIn.declareSha = false;
    const refused = await download(mirror, 'glow-fx');
    expect(refused.status).toBe(502);
  });

  it('keeps nothing of a download broken off midway, and fetches it whole later', async () => {
    const { standIn, mirror, zip } = await setUp();
    standIn.cutDownloads = true;
    expect((await download(mirror, 'glow-fx')).status).toBe(502);
    standIn.cutDownloads = false;
    const whole = await download(mirror, 'glow-fx');
    expect(whole.status).toBe(200);
    expect(whole.bytes?.equals(zip)).toBe(true);
  });

  it('never asks upstream about a local node id, or an archive of a local publisher', async () => {
    const { standIn, mirror } = await setUp();
    const owner = await createUser(mirror);
    await createPublisher(mirror, owner, 'lumen');
    const pat = await createPat(mirror, owner, 'lumen');
    // publishing a new id asks upstream whether it holds it (dependency-confusion.test.ts); after that, never
    await publishAndUpload(mirror, pat, 'lumen', 'private-fx', '1.0.0');
    const before = standIn.requests.length;
    for (const path of [
      '/nodes/private-fx',
      '/nodes/private-fx/versions',
      '/nodes/private-fx/versions/2.0.0',
      '/nodes/private-fx/install?version=2.0.0',
      '/archives/lumen/private-fx/2.0.0/node.zip',
      '/archives/lumen/glow-fx/1.0.0/node.zip',
    ])
      await call(mirror.url, 'GET', path);
    expect(standIn.requests.slice(before)).toEqual([]);
  });
});
