// The operator's policy over upstream versions (serve --upstream-policy): held back, blocked by range,
// blocked for pinning a listed bad dependency; such versions are absent from every answer, and an
// admin reads why.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPolicy } from '../../src/server/mirror/policy.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { call, createUser, makeZip } from '../server/fixtures.js';
import { startStandIn, type StandIn } from './stand-in.js';

const POLICY = `
[hold]
days = 7

[[block]]
node = "ranged-fx"
versions = ">=1.2.0 <1.3.0"
reason = "broken installer"

[[advisory]]
package = "ultralytics"
versions = ["8.3.41", "8.3.42"]
reason = "shipped a miner"
`;

const versionsOf = (reply: { body: { version: string }[] }) => reply.body.map((v) => v.version);

describe('the upstream policy', () => {
  let standIn: StandIn;
  let mirror: TestServer;

  beforeAll(async () => {
    standIn = await startStandIn();
    const zip = await makeZip();
    standIn.nodes.set('young-fx', {
      publisher: 'lumen',
      versions: [
        { version: '1.0.0', zip, ageDays: 30 },
        { version: '1.1.0', zip, ageDays: 2 },
      ],
    });
    standIn.nodes.set('ranged-fx', {
      publisher: 'lumen',
      versions: ['1.0.0', '1.2.0', '1.2.5', '1.3.0'].map((version) => ({ version, zip })),
    });
    standIn.nodes.set('pinning-fx', {
      publisher: 'lumen',
      versions: [
        { version: '1.0.0', zip, dependencies: ['numpy>=1.26'] },
        { version: '2.0.0', zip, dependencies: ['numpy>=1.26', 'Ultralytics==8.3.41'] },
      ],
    });
    const pinningZip = await makeZip({
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      'requirements.txt': '# vision\nnumpy>=1.26\nultralytics == 8.3.42  # detection\n',
    });
    for (const id of ['req-fx', 'req-sync-fx'])
      standIn.nodes.set(id, {
        publisher: 'lumen',
        versions: [
          { version: '1.0.0', zip },
          { version: '2.0.0', zip: pinningZip },
        ],
      });
    const file = join(tempDir(), 'policy.toml');
    writeFileSync(file, POLICY);
    mirror = await startServer({ upstream: { url: standIn.url, policy: loadPolicy(file) } });
  });
  afterAll(async () => {
    await mirror?.close();
    await standIn?.close();
  });

  it('holds back a 2-day-old version under `hold 7 days`: absent from the list, the node and install', async () => {
    expect(versionsOf(await call(mirror.url, 'GET', '/nodes/young-fx/versions'))).toEqual(['1.0.0']);
    expect((await call(mirror.url, 'GET', '/nodes/young-fx')).body.latest_version.version).toBe('1.0.0');
    expect((await call(mirror.url, 'GET', '/nodes/young-fx/install')).body.version).toBe('1.0.0');
    expect((await call(mirror.url, 'GET', '/nodes/young-fx/install?version=1.1.0')).status).toBe(404);
    expect((await call(mirror.url, 'GET', '/archives/lumen/young-fx/1.1.0/node.zip')).status).toBe(404);
  });

  it('leaves out a blocked range', async () => {
    expect(versionsOf(await call(mirror.url, 'GET', '/nodes/ranged-fx/versions'))).toEqual(['1.3.0', '1.0.0']);
    expect((await call(mirror.url, 'GET', '/nodes/ranged-fx/versions/1.2.5')).status).toBe(404);
  });

  it('leaves out a version that pins a listed bad dependency', async () => {
    expect(versionsOf(await call(mirror.url, 'GET', '/nodes/pinning-fx/versions'))).toEqual(['1.0.0']);
    expect((await call(mirror.url, 'GET', '/nodes/pinning-fx/install')).body.version).toBe('1.0.0');
  });

  it("leaves out a version whose archive's requirements.txt pins a listed bad package, once the archive is read", async () => {
    expect((await call(mirror.url, 'GET', '/nodes/req-fx/install')).body.version).toBe('2.0.0');
    const download = await call(mirror.url, 'GET', '/archives/lumen/req-fx/2.0.0/node.zip');
    expect(download.status).toBe(404);
    expect(download.body.error).toBe('not_found');
    expect(versionsOf(await call(mirror.url, 'GET', '/nodes/req-fx/versions'))).toEqual(['1.0.0']);
    expect((await call(mirror.url, 'GET', '/nodes/req-fx/install')).body.version).toBe('1.0.0');
    const admin = await call(mirror.url, 'GET', '/mirror/nodes/req-fx', { token: mirror.adminToken });
    const held = admin.body.versions.find((v: { version: string }) => v.version === '2.0.0').held_back;
    expect(held).toContain('requirements.txt');
    expect(held).toContain('ultralytics==8.3.42');
    expect(held).toContain('shipped a miner');
  });

  it('reports such a version held back in a sync', async () => {
    const synced = await call(mirror.url, 'POST', '/mirror/nodes/req-sync-fx/sync', {
      token: mirror.adminToken,
      body: { versions: 'all' },
    });
    expect(synced.status, synced.text).toBe(200);
    const outcomes = Object.fromEntries(
      synced.body.versions.map((v: { version: string; outcome: string }) => [v.version, v.outcome]),
    );
    expect(outcomes).toEqual({ '2.0.0': 'held_back', '1.0.0': 'fetched' });
  });

  it('shows an admin why each version is held back, and nobody else', async () => {
    const young = await call(mirror.url, 'GET', '/mirror/nodes/young-fx', { token: mirror.adminToken });
    expect(young.status, young.text).toBe(200);
    const reasons = Object.fromEntries(
      young.body.versions.map((v: { version: string; held_back?: string }) => [v.version, v.held_back]),
    );
    expect(reasons['1.0.0']).toBe(undefined);
    expect(reasons['1.1.0']).toContain('younger than 7 days');
    const pinning = await call(mirror.url, 'GET', '/mirror/nodes/pinning-fx', { token: mirror.adminToken });
    expect(pinning.body.versions.find((v: { version: string }) => v.version === '2.0.0').held_back).toContain(
      'ultralytics==8.3.41',
    );
    const ranged = await call(mirror.url, 'GET', '/mirror/nodes/ranged-fx', { token: mirror.adminToken });
    expect(ranged.body.versions.filter((v: { held_back?: string }) => v.held_back).length).toBe(2);
    const user = await createUser(mirror);
    expect((await call(mirror.url, 'GET', '/mirror/nodes/young-fx', { token: user.token })).status).toBe(403);
  });

  it('ships an example policy that loads and blocks the advisory pins it lists', () => {
    const example = loadPolicy(join(import.meta.dirname, '../../docs/upstream-policy.example.toml'));
    expect(example.hold?.days).toBe(7);
    expect(example.advisory.some((a) => a.package === 'ultralytics')).toBe(true);
  });
});
