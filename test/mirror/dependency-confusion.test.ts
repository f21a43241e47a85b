// Dependency confusion, both ways: a local id is never read from upstream (upstream-failures.test.ts
// asserts it on the stand-in's request log), and a local publish of an id upstream holds under another
// publisher is refused unless the operator allows that id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import { call, createPat, createPublisher, createUser, makeZip, publish } from '../server/fixtures.js';
import { startStandIn, type StandIn } from './stand-in.js';

describe('a local publish of an id upstream holds', () => {
  let standIn: StandIn;
  let mirror: TestServer;
  let studio: string;
  let lumen: string;

  beforeAll(async () => {
    standIn = await startStandIn();
    const zip = await makeZip();
    standIn.nodes.set('glow-fx', { publisher: 'lumen', versions: [{ version: '1.0.0', zip }] });
    standIn.nodes.set('shade-fx', { publisher: 'lumen', versions: [{ version: '1.0.0', zip }] });
    standIn.nodes.set('halo-fx', { publisher: 'lumen', versions: [{ version: '1.0.0', zip }] });
    mirror = await startServer({ upstream: { url: standIn.url, allowIds: ['halo-fx'] } });
    const owner = await createUser(mirror);
    await createPublisher(mirror, owner, 'studio');
    await createPublisher(mirror, owner, 'lumen');
    studio = await createPat(mirror, owner, 'studio');
    lumen = await createPat(mirror, owner, 'lumen');
  });
  afterAll(async () => {
    await mirror?.close();
    await standIn?.close();
  });

  it('is refused for a publisher that does not own it upstream, naming the owner and the way out', async () => {
    const refused = await publish(mirror, studio, 'studio', 'glow-fx', '9.0.0');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    expect(refused.body.message).toContain('lumen');
    expect(refused.body.hint).toContain('--upstream-allow glow-fx');
    // nothing was created
    const studioNodes = await call(mirror.url, 'GET', '/publishers/studio/nodes');
    expect(studioNodes.status, studioNodes.text).toBe(200);
    expect(JSON.stringify(studioNodes.body)).not.toContain('glow-fx');
  });

  it("never serves an upstream node of a publisher id this registry has: that publisher's names are local", async () => {
    const before = standIn.requests.length;
    for (const path of ['/nodes/shade-fx', '/nodes/shade-fx/versions', '/nodes/shade-fx/install']) {
      const read = await call(mirror.url, 'GET', path);
      expect(read.status, path).toBe(404);
      expect(read.body.error).toBe('not_found');
    }
    expect((await call(mirror.url, 'GET', '/archives/lumen/shade-fx/1.0.0/node.zip')).status).toBe(404);
    expect(standIn.requests.slice(before).filter((line) => line.includes('cdn'))).toEqual([]);
    const listed = await call(mirror.url, 'GET', '/nodes/search?q=shade');
    expect(listed.body.nodes.map((node: { id: string }) => node.id)).toEqual([]);
  });

  it('goes ahead for the publisher of the same id upstream, for an id the operator allows, and for an id upstream lacks', async () => {
    expect((await publish(mirror, lumen, 'lumen', 'glow-fx', '9.0.0')).status).toBe(201);
    expect((await publish(mirror, studio, 'studio', 'halo-fx', '9.0.0')).status).toBe(201);
    expect((await publish(mirror, studio, 'studio', 'studio-only', '1.0.0')).status).toBe(201);
    // from then on the local node wins
    const before = standIn.requests.length;
    expect((await call(mirror.url, 'GET', '/nodes/halo-fx')).body.origin).toBe(undefined);
    expect(standIn.requests.slice(before)).toEqual([]);
  });
});
