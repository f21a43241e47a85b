// `mirror sync --publisher ID` and `--all`: the mirror pages through upstream's lists (a publisher's
// nodes, or every node), leaving out what local ids and publishers hide; `--versions latest|all` for each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { startServer, type TestServer } from '../helpers.js';
import { call, createPat, createPublisher, createUser, makeZip, publishAndUpload } from '../server/fixtures.js';

interface Report {
  nodes: { id: string; versions: { version: string; outcome: string }[] }[];
}
const outcomes = (report: Report) =>
  Object.fromEntries(report.nodes.map((node) => [node.id, node.versions.map((v) => `${v.version} ${v.outcome}`)]));

describe('mirror sync --publisher and --all', () => {
  let upstream: TestServer;
  let mirror: TestServer;

  beforeAll(async () => {
    upstream = await startServer();
    const owner = await createUser(upstream);
    const zip = await makeZip();
    for (const [publisher, ids] of [
      ['lumen', ['lumen-a', 'lumen-b', 'lumen-c']],
      ['other', ['other-a']],
      ['studio', ['studio-a']],
    ] as const) {
      await createPublisher(upstream, owner, publisher);
      const pat = await createPat(upstream, owner, publisher);
      for (const id of ids) {
        await publishAndUpload(upstream, pat, publisher, id, '1.0.0', {}, zip);
        if (publisher === 'lumen') await publishAndUpload(upstream, pat, publisher, id, '1.1.0', {}, zip);
      }
    }
    mirror = await startServer({ upstream: { url: upstream.url } });
    // the mirror has a publisher of its own named studio: upstream's studio nodes are not its to sync
    await createPublisher(mirror, await createUser(mirror), 'studio');
  });
  afterAll(async () => {
    await mirror?.close();
    await upstream?.close();
  });

  const cli = (args: string[]) => runInProcess(['--registry', mirror.url, '--token', mirror.adminToken, ...args]);
  const page = (query: string, token = mirror.adminToken) =>
    call(mirror.url, 'GET', `/mirror/upstream-nodes?${query}`, { token });

  it("pages through an upstream publisher's nodes and every upstream node, for admins only", async () => {
    const first = await page('publisher=lumen&limit=2&page=1');
    expect(first.status, first.text).toBe(200);
    const second = await page('publisher=lumen&limit=2&page=2');
    expect([first.body.more, second.body.more]).toEqual([true, false]);
    const ids = [...first.body.nodes, ...second.body.nodes].map((node: { id: string }) => node.id);
    expect(ids.sort()).toEqual(['lumen-a', 'lumen-b', 'lumen-c']);
    const all = await page('limit=100');
    expect(all.body.nodes.map((node: { id: string }) => node.id).sort()).toEqual([
      'lumen-a',
      'lumen-b',
      'lumen-c',
      'other-a',
    ]);
    expect((await page('publisher=nobody-here')).status).toBe(404);
    const user = await createUser(mirror);
    expect((await page('limit=10', user.token)).status).toBe(403);
  });

  it('syncs every version of a publisher, then every upstream node at its latest', async () => {
    const byPublisher = await cli(['mirror', 'sync', '--publisher', 'lumen', '--versions', 'all', '--json']);
    expect(byPublisher.code, byPublisher.stderr).toBe(0);
    expect(outcomes(JSON.parse(byPublisher.stdout))).toEqual({
      'lumen-a': ['1.1.0 fetched', '1.0.0 fetched'],
      'lumen-b': ['1.1.0 fetched', '1.0.0 fetched'],
      'lumen-c': ['1.1.0 fetched', '1.0.0 fetched'],
    });
    const everything = await cli(['mirror', 'sync', '--all', '--json']);
    expect(everything.code, everything.stderr).toBe(0);
    expect(outcomes(JSON.parse(everything.stdout))).toEqual({
      'lumen-a': ['1.1.0 kept'],
      'lumen-b': ['1.1.0 kept'],
      'lumen-c': ['1.1.0 kept'],
      'other-a': ['1.0.0 fetched'],
    });
    const status = await call(mirror.url, 'GET', '/mirror/status', { token: mirror.adminToken });
    expect(status.body.archives).toBe(7);
  });

  it('refuses --all with --publisher, and a sync with nothing named, naming the flags', async () => {
    const both = await cli(['mirror', 'sync', '--all', '--publisher', 'lumen']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--publisher');
    const none = await cli(['mirror', 'sync']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--all');
  });
});
