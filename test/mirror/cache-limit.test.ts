// The cache limit (--upstream-cache-max): downloads past it evict the least recently used archives that
// are not pinned; pinned ones (synced, or installed in the last --upstream-pin-days days) stay, and the
// limit holds even under a sync larger than it. An evicted one is fetched again (checked) on demand.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import { call, makeZip } from '../server/fixtures.js';
import { startStandIn, type StandIn } from './stand-in.js';

const PACKS = ['pack-a', 'pack-b', 'pack-c', 'pack-d', 'pack-e'];

describe('the mirror cache limit', () => {
  let standIn: StandIn;
  let mirror: TestServer;
  const zips: Record<string, Buffer> = {};

  beforeAll(async () => {
    standIn = await startStandIn();
    for (const id of PACKS) {
      // stored, not deflated: each archive is about 20 kB
      zips[id] = await makeZip({ '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n', 'weights.bin': randomBytes(20_000) });
      standIn.nodes.set(id, { publisher: 'lumen', versions: [{ version: '1.0.0', zip: zips[id] }] });
    }
    // installs pin nothing here: the LRU order alone decides
    mirror = await startServer({ upstream: { url: standIn.url, cacheMaxBytes: 50_000, pinDays: 0 } });
  });
  afterAll(async () => {
    await mirror?.close();
    await standIn?.close();
  });

  const kept = (id: string) => existsSync(join(mirror.dataDir, `archives/_mirror/archives/${id}/1.0.0/node.zip`));
  const download = async (id: string) => {
    const install = await call(mirror.url, 'GET', `/nodes/${id}/install`);
    return Buffer.from(await (await fetch(install.body.downloadUrl)).arrayBuffer());
  };

  it('keeps the unpinned bytes within the limit, and the pinned archives whatever the limit', async () => {
    const synced = await call(mirror.url, 'POST', '/mirror/nodes/pack-a/sync', {
      token: mirror.adminToken,
      body: { versions: 'latest' },
    });
    expect(synced.status, synced.text).toBe(200);
    for (const id of PACKS.slice(1)) expect((await download(id)).equals(zips[id]!)).toBe(true);
    const status = await call(mirror.url, 'GET', '/mirror/status', { token: mirror.adminToken });
    const unpinned = status.body.nodes
      .filter((node: { pinned: number }) => node.pinned === 0)
      .reduce((sum: number, node: { bytes: number }) => sum + node.bytes, 0);
    const pinnedBytes = zips['pack-a']!.length;
    expect(status.body.bytes).toBeLessThanOrEqual(50_000);
    expect(unpinned).toBeLessThanOrEqual(50_000 - pinnedBytes);
    expect(kept('pack-a')).toBe(true);
    expect(PACKS.slice(1).filter(kept).length).toBeLessThan(4);
    // the newest download is never the one evicted
    expect(kept('pack-e')).toBe(true);
  });

  it('fetches an evicted archive again, the same bytes', async () => {
    const evicted = PACKS.slice(1).find((id) => !kept(id))!;
    expect(evicted).toBeDefined();
    expect((await download(evicted)).equals(zips[evicted]!)).toBe(true);
    expect(kept(evicted)).toBe(true);
  });
});

describe('the mirror cache limit under a sync larger than it', () => {
  let standIn: StandIn;
  let mirror: TestServer;
  const zips: Record<string, Buffer> = {};
  const ids = ['installed-fx', ...PACKS];

  beforeAll(async () => {
    standIn = await startStandIn();
    for (const id of ids) {
      zips[id] = await makeZip({ '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n', 'weights.bin': randomBytes(20_000) });
      standIn.nodes.set(id, { publisher: 'lumen', versions: [{ version: '1.0.0', zip: zips[id] }] });
    }
    mirror = await startServer({ upstream: { url: standIn.url, cacheMaxBytes: 50_000 } });
  });
  afterAll(async () => {
    await mirror?.close();
    await standIn?.close();
  });

  const kept = (id: string) => existsSync(join(mirror.dataDir, `archives/_mirror/archives/${id}/1.0.0/node.zip`));
  const status = async () => (await call(mirror.url, 'GET', '/mirror/status', { token: mirror.adminToken })).body;

  it('keeps the limit, keeps the archive installed today, and reports what did not fit', async () => {
    const install = await call(mirror.url, 'GET', '/nodes/installed-fx/install');
    expect(Buffer.from(await (await fetch(install.body.downloadUrl)).arrayBuffer()).equals(zips['installed-fx']!)).toBe(
      true,
    );
    const outcomes: Record<string, string> = {};
    for (const id of PACKS) {
      const synced = await call(mirror.url, 'POST', `/mirror/nodes/${id}/sync`, {
        token: mirror.adminToken,
        body: { versions: 'latest' },
      });
      expect(synced.status, synced.text).toBe(200);
      outcomes[id] = synced.body.versions[0].outcome;
      if (outcomes[id] === 'failed') expect(synced.body.versions[0].reason).toContain('limit of 50000 bytes');
      expect((await status()).bytes).toBeLessThanOrEqual(50_000);
    }
    // 20 kB installed today + 20 kB synced fill the 50 kB: the other syncs do not fit
    expect(Object.values(outcomes)).toEqual(['fetched', 'failed', 'failed', 'failed', 'failed']);
    expect(kept('installed-fx')).toBe(true);
    expect(kept('pack-a')).toBe(true);
    // both count as pinned: one synced, one installed today
    const pinned = (await status()).nodes.filter((node: { pinned: number }) => node.pinned === 1);
    expect(pinned.map((node: { id: string }) => node.id).sort()).toEqual(['installed-fx', 'pack-a']);
    expect(PACKS.slice(1).filter(kept)).toEqual([]);
  });

  it('still serves an archive that does not fit, whole, without keeping it', async () => {
    const install = await call(mirror.url, 'GET', '/nodes/pack-e/install');
    const bytes = Buffer.from(await (await fetch(install.body.downloadUrl)).arrayBuffer());
    expect(bytes.equals(zips['pack-e']!)).toBe(true);
    expect(kept('pack-e')).toBe(false);
    expect((await status()).bytes).toBeLessThanOrEqual(50_000);
  });
});

describe('the pin of a download', () => {
  it('is written down when an archive kept for a while is downloaded again, so it outlives a restart', async () => {
    const standIn = await startStandIn();
    const zip = await makeZip();
    standIn.nodes.set('pack-z', { publisher: 'lumen', versions: [{ version: '1.0.0', zip }] });
    const mirror = await startServer({ upstream: { url: standIn.url } });
    const entryFile = join(mirror.dataDir, 'archives/_mirror/nodes/pack-z.json');
    const lastUsed = () => JSON.parse(readFileSync(entryFile, 'utf8')).archives['1.0.0'].last_used as string;
    try {
      const download = async () => {
        const install = await call(mirror.url, 'GET', '/nodes/pack-z/install');
        expect((await fetch(install.body.downloadUrl)).status).toBe(200);
      };
      await download();
      const first = lastUsed();
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.parse(first) + 6 * 24 * 60 * 60 * 1000);
      await download();
      vi.useRealTimers();
      await vi.waitFor(() =>
        expect(Date.parse(lastUsed()) - Date.parse(first)).toBeGreaterThan(5 * 24 * 60 * 60 * 1000),
      );
    } finally {
      vi.useRealTimers();
      await mirror.close();
      await standIn.close();
    }
  });
});
