// Lists and search through a mirror: the registry's own nodes, then the nodes kept from upstream, marked
// `origin: "upstream"`; versions the policy filters are absent, and a list never asks upstream.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPolicy } from '../../src/server/mirror/policy.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { call, createPat, createPublisher, createUser, makeZip, publishAndUpload } from '../server/fixtures.js';
import { startStandIn, type StandIn } from './stand-in.js';

const POLICY = `
[hold]
days = 7

[[block]]
node = "banned-fx"
reason = "stole credentials"
`;

interface Listed {
  id: string;
  origin?: string;
  latest_version?: { version: string; downloadUrl: string };
}
const idsOf = (reply: { body: { nodes: Listed[] } }) => reply.body.nodes.map((node) => node.id);

describe('lists and search through a mirror', () => {
  let standIn: StandIn;
  let mirror: TestServer;

  beforeAll(async () => {
    standIn = await startStandIn();
    const zip = await makeZip();
    standIn.nodes.set('glow-fx', {
      publisher: 'lumen',
      versions: [
        { version: '1.0.0', zip, ageDays: 30 },
        { version: '1.1.0', zip, ageDays: 2 },
      ],
    });
    standIn.nodes.set('banned-fx', { publisher: 'lumen', versions: [{ version: '1.0.0', zip }] });
    standIn.nodes.set('fresh-fx', { publisher: 'lumen', versions: [{ version: '1.0.0', zip, ageDays: 1 }] });
    standIn.nodes.set('halo-fx', { publisher: 'lumen', versions: [{ version: '1.0.0', zip }] });
    const file = join(tempDir(), 'policy.toml');
    writeFileSync(file, POLICY);
    mirror = await startServer({ upstream: { url: standIn.url, policy: loadPolicy(file) } });
    const owner = await createUser(mirror);
    await createPublisher(mirror, owner, 'studio');
    const pat = await createPat(mirror, owner, 'studio');
    await publishAndUpload(mirror, pat, 'studio', 'studio-glow', '1.0.0');
    // the mirror keeps what it was asked for: three of the four upstream nodes
    for (const id of ['glow-fx', 'banned-fx', 'fresh-fx']) await call(mirror.url, 'GET', `/nodes/${id}`);
  });
  afterAll(async () => {
    await mirror?.close();
    await standIn?.close();
  });

  it('lists local nodes, then the kept upstream ones marked as such, leaving out nodes the policy filters whole', async () => {
    const before = standIn.requests.length;
    const list = await call(mirror.url, 'GET', '/nodes');
    expect(list.status, list.text).toBe(200);
    expect(idsOf(list)).toEqual(['studio-glow', 'glow-fx']);
    expect(list.body.total).toBe(2);
    const [local, upstream] = list.body.nodes as Listed[];
    expect(local!.origin).toBe(undefined);
    expect(upstream!.origin).toBe('upstream');
    // the 2-day-old 1.1.0 is held back: the list's latest is 1.0.0, downloaded from the mirror
    expect(upstream!.latest_version?.version).toBe('1.0.0');
    expect(upstream!.latest_version?.downloadUrl.startsWith(`${mirror.url}/archives/lumen/glow-fx/`)).toBe(true);
    // a list answers from what is kept, never asking upstream
    expect(standIn.requests.slice(before)).toEqual([]);
  });

  it('checks the kept nodes against local names in one store call, not one per kept node', async () => {
    const storeCalls = async () => {
      const metrics = await fetch(`${mirror.url}/metrics`, {
        headers: { authorization: `Bearer ${mirror.adminToken}` },
      });
      const text = await metrics.text();
      const count = (operation: string) =>
        Number(
          new RegExp(`nodereg_database_duration_seconds_count\\{operation="${operation}",outcome="ok"\\} (\\d+)`).exec(
            text,
          )?.[1] ?? 0,
        );
      return { getNode: count('getNode'), heldNames: count('heldNames') };
    };
    const before = await storeCalls();
    expect(idsOf(await call(mirror.url, 'GET', '/nodes'))).toEqual(['studio-glow', 'glow-fx']);
    const after = await storeCalls();
    expect(after.heldNames - before.heldNames).toBe(1);
    expect(after.getNode - before.getNode).toBe(0);
  });

  it('pages across local and kept nodes', async () => {
    const first = await call(mirror.url, 'GET', '/nodes?limit=1&page=1');
    const second = await call(mirror.url, 'GET', '/nodes?limit=1&page=2');
    const third = await call(mirror.url, 'GET', '/nodes?limit=1&page=3');
    expect([idsOf(first), idsOf(second), idsOf(third)]).toEqual([['studio-glow'], ['glow-fx'], []]);
    expect(first.body.totalPages).toBe(2);
  });

  it('searches kept nodes by their words, and names them with node_id', async () => {
    expect(idsOf(await call(mirror.url, 'GET', '/nodes/search?q=glow'))).toEqual(['studio-glow', 'glow-fx']);
    expect(idsOf(await call(mirror.url, 'GET', '/nodes/search?q=hosted%20regis'))).toEqual(['glow-fx']);
    expect(idsOf(await call(mirror.url, 'GET', '/nodes/search?q=banned'))).toEqual([]);
    expect(idsOf(await call(mirror.url, 'GET', '/nodes/search?q=studio'))).toEqual(['studio-glow']);
    expect(idsOf(await call(mirror.url, 'GET', '/nodes?node_id=glow-fx&node_id=halo-fx'))).toEqual(['glow-fx']);
  });
});
