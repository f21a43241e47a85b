// Reads of DESIGN.md §3: lists with paging and sort, search, a node, its versions in semver order,
// publishers and their nodes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_TERMS_MAX } from '../../../src/contract/limits.js';
import { NodeList } from '../../../src/contract/resources.js';
import { startServer, type TestServer } from '../../helpers.js';
import { client, createPublisher, createUser, expectError, publish, type TestUser } from '../fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let alice: TestUser;

const ids = (reply: { body: { nodes: { id: string }[] } }) => reply.body.nodes.map((node) => node.id);

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  alice = await createUser(server, 'alice');
  await createPublisher(server, alice, 'alice-co');
  // 25 nodes, published in order: n01 … n25
  for (let i = 1; i <= 25; i++) {
    const id = `n${String(i).padStart(2, '0')}`;
    const reply = await publish(server, alice.token, 'alice-co', id, '1.0.0', {
      node: { name: `Node ${String.fromCharCode(122 - i)}` },
    });
    expect(reply.status).toBe(201);
  }
});
afterAll(() => server.close());

describe('GET /nodes', () => {
  it('pages from 1 with {nodes, total, page, limit, totalPages}, newest first by default', async () => {
    const first = await api.get('/nodes?limit=10');
    expect(first.status).toBe(200);
    const list = NodeList.parse(first.body);
    expect({ total: list.total, page: list.page, limit: list.limit, totalPages: list.totalPages }).toEqual({
      total: 25,
      page: 1,
      limit: 10,
      totalPages: 3,
    });
    expect(ids(first)).toEqual(['n25', 'n24', 'n23', 'n22', 'n21', 'n20', 'n19', 'n18', 'n17', 'n16']);
    const last = await api.get('/nodes?limit=10&page=3');
    expect(ids(last)).toEqual(['n05', 'n04', 'n03', 'n02', 'n01']);
    const beyond = await api.get('/nodes?limit=10&page=4');
    expect(beyond.body).toMatchObject({ nodes: [], total: 25, page: 4 });
    expect((await api.get('/nodes')).body).toMatchObject({ page: 1, limit: 20, totalPages: 2 });
  });

  it('sorts by name, by rating and by search_ranking, ties broken by id', async () => {
    expect(ids(await api.get('/nodes?sort=name&limit=3'))).toEqual(['n25', 'n24', 'n23']);
    const reader = await createUser(server, 'reader');
    await api.post('/nodes/n03/reviews?star=5', { token: reader.token });
    await api.post('/nodes/n02/reviews?star=5', { token: reader.token });
    await api.post('/nodes/n01/reviews?star=4', { token: reader.token });
    expect(ids(await api.get('/nodes?sort=rating&limit=4'))).toEqual(['n02', 'n03', 'n01', 'n04']);
    await api.put('/publishers/alice-co/nodes/n10', { token: server.adminToken, body: { search_ranking: 7 } });
    await api.put('/publishers/alice-co/nodes/n09', { token: server.adminToken, body: { search_ranking: 7 } });
    await api.put('/publishers/alice-co/nodes/n11', { token: server.adminToken, body: { search_ranking: 9 } });
    expect(ids(await api.get('/nodes?sort=search_ranking&limit=3'))).toEqual(['n11', 'n09', 'n10']);
    // every node has 0 downloads: all ties, so id order
    expect(ids(await api.get('/nodes?sort=downloads&limit=3'))).toEqual(['n01', 'n02', 'n03']);
  });

  it('is 400 for a limit outside 1–100, a page below 1, an unknown sort', async () => {
    for (const query of ['limit=0', 'limit=101', 'page=0', 'page=-1', 'page=x', 'sort=popularity', 'limit=1.5']) {
      const reply = await api.get(`/nodes?${query}`);
      expectError(reply, 400, 'invalid_request');
      expect(reply.body.details.length).toBeGreaterThan(0);
    }
    expect((await api.get('/nodes?limit=100')).status).toBe(200);
  });

  it('lists Active nodes only', async () => {
    await api.put('/publishers/alice-co/nodes/n25', { token: alice.token, body: { status: 'NodeStatusDeleted' } });
    await api.put('/publishers/alice-co/nodes/n24', { token: server.adminToken, body: { status: 'NodeStatusBanned' } });
    const reply = await api.get('/nodes?limit=2', { token: server.adminToken });
    expect(ids(reply)).toEqual(['n23', 'n22']);
    expect(reply.body.total).toBe(23);
    expect((await api.get('/nodes/search?q=n25')).body.total).toBe(0);
    expect((await api.get('/nodes/search?q=n24')).body.total).toBe(0);
    await api.put('/publishers/alice-co/nodes/n25', { token: alice.token, body: { status: 'NodeStatusActive' } });
    await api.put('/publishers/alice-co/nodes/n24', { token: server.adminToken, body: { status: 'NodeStatusActive' } });
  });
});

describe('GET /nodes/search', () => {
  beforeAll(async () => {
    const bob = await createUser(server, 'bob');
    await createPublisher(server, bob, 'bob-co');
    await publish(server, bob.token, 'bob-co', 'relight-tools', '1.0.0', {
      node: {
        name: 'Relight Tools',
        description: 'Change the light of a photo',
        author: 'Bob Smith',
        tags: ['lighting'],
      },
    });
    await publish(server, bob.token, 'bob-co', 'video_extender', '1.0.0', {
      node: { name: 'Extender', description: 'Extends videos', author: 'Robert', tags: ['video', 'extend'] },
    });
    await publish(server, bob.token, 'bob-co', 'skin.fixer', '1.0.0', {
      node: { name: 'Skin fixer', description: 'Enhances skin in a photo', author: 'Bob Smith', tags: ['portrait'] },
    });
  });

  it.each([
    ['an id', 'relight-tools', ['relight-tools']],
    ['a word of an id', 'extender', ['video_extender']],
    ['a name', 'Skin', ['skin.fixer']],
    ['a description word', 'videos', ['video_extender']],
    ['an author', 'robert', ['video_extender']],
    ['a tag', 'portrait', ['skin.fixer']],
    ['a prefix', 'relig', ['relight-tools']],
    ['every word (AND)', 'photo skin', ['skin.fixer']],
    ['any case', 'PHOTO', ['relight-tools', 'skin.fixer']],
    ['punctuation as separators', 'bob "smith" (photo)*', ['relight-tools', 'skin.fixer']],
    ['nothing', 'zzzz', []],
    ['nothing for punctuation alone (no word to match)', '%_*', []],
  ])('matches %s', async (_what, q, expected) => {
    const reply = await api.get(`/nodes/search?q=${encodeURIComponent(q)}`);
    expect(reply.status, reply.text).toBe(200);
    expect(ids(reply).sort()).toEqual([...expected].sort());
    expect(reply.body.total).toBe(expected.length);
  });

  it(`answers a q of more than ${SEARCH_TERMS_MAX} different words 400 naming q; repeats and words that start another count once`, async () => {
    const words = Array.from({ length: SEARCH_TERMS_MAX + 1 }, (_, i) => `photo${String.fromCharCode(97 + i)}`);
    const refused = await api.get(`/nodes/search?q=${encodeURIComponent(words.join(' '))}`);
    expectError(refused, 400, 'invalid_request');
    expect(refused.body.details.map((d: { path: string }) => d.path)).toEqual(['q']);
    const repeated = await api.get(`/nodes/search?q=${encodeURIComponent('ph pho PHOTO '.repeat(15))}`);
    expect(repeated.status, repeated.text).toBe(200);
    expect(ids(repeated).sort()).toEqual(['relight-tools', 'skin.fixer']);
  });

  it('ranks a match in the id or name above one in the description', async () => {
    const reply = await api.get('/nodes/search?q=extend');
    expect(ids(reply)[0]).toBe('video_extender');
    await publish(server, alice.token, 'alice-co', 'other-thing', '1.0.0', {
      node: { description: 'can extend things' },
    });
    expect(ids(await api.get('/nodes/search?q=extend'))).toEqual(['video_extender', 'other-thing']);
  });

  it('pages, and an empty query lists every Active node', async () => {
    const page = await api.get('/nodes/search?q=node&limit=10&page=2');
    expect(page.body).toMatchObject({ total: 25, page: 2, limit: 10, totalPages: 3 });
    expect(page.body.nodes).toHaveLength(10);
    const all = await api.get('/nodes/search');
    expect(all.body.total).toBe(29);
    expectError(await api.get('/nodes/search?q=a&limit=500'), 400, 'invalid_request');
  });
});

describe('a node and its versions', () => {
  it('lists every version newest semver first (never text order), with status', async () => {
    const order = ['1.0.0', '1.10.0', '1.2.0', '2.0.0-rc.1', '2.0.0-beta.2', '2.0.0', '2.0.0-beta.10', '0.9.0'];
    for (const version of order)
      expect((await publish(server, alice.token, 'alice-co', 'many', version)).status).toBe(201);
    const reply = await api.get('/nodes/many/versions');
    expect(reply.status).toBe(200);
    expect(reply.body.map((v: { version: string }) => v.version)).toEqual([
      '2.0.0',
      '2.0.0-rc.1',
      '2.0.0-beta.10',
      '2.0.0-beta.2',
      '1.10.0',
      '1.2.0',
      '1.0.0',
      '0.9.0',
    ]);
    expect(reply.body.every((v: { status: string }) => v.status === 'NodeVersionStatusPending')).toBe(true);
  });

  it('gets one version by semver (v prefix too) or id; 404 otherwise', async () => {
    const byVersion = await api.get('/nodes/many/versions/1.10.0');
    expect(byVersion.body.version).toBe('1.10.0');
    expect((await api.get('/nodes/MANY/versions/v1.10.0')).body.id).toBe(byVersion.body.id);
    expect((await api.get(`/nodes/many/versions/${byVersion.body.id}`)).body.version).toBe('1.10.0');
    expectError(await api.get('/nodes/many/versions/3.0.0'), 404, 'not_found');
    expectError(await api.get('/nodes/nope/versions/1.0.0'), 404, 'not_found');
    expectError(await api.get('/nodes/nope/versions'), 404, 'not_found');
  });

  it('install is 404 while no version is Active', async () => {
    expectError(await api.get('/nodes/many/install'), 404, 'not_found');
    expectError(await api.get('/nodes/many/install?version=1.0.0'), 404, 'not_found');
    expect((await api.get('/nodes/many')).body.downloads).toBe(0);
  });

  it('hides a Deleted node from everyone but members and admins', async () => {
    await api.put('/publishers/alice-co/nodes/many', { token: alice.token, body: { status: 'NodeStatusDeleted' } });
    expectError(await api.get('/nodes/many'), 404, 'not_found');
    expectError(await api.get('/nodes/many/versions'), 404, 'not_found');
    const stranger = await createUser(server);
    expectError(await api.get('/nodes/many', { token: stranger.token }), 404, 'not_found');
    expect((await api.get('/nodes/many', { token: alice.token })).status).toBe(200);
    expect((await api.get('/nodes/many', { token: server.adminToken })).status).toBe(200);
    const publicList = await api.get('/publishers/alice-co/nodes');
    expect(publicList.body.some((n: { id: string }) => n.id === 'many')).toBe(false);
    const memberList = await api.get('/publishers/alice-co/nodes', { token: alice.token });
    expect(memberList.body.find((n: { id: string }) => n.id === 'many').status).toBe('NodeStatusDeleted');
  });
});

describe('publishers', () => {
  it('answers a publisher with its members, and its nodes', async () => {
    const reply = await api.get('/publishers/alice-co');
    expect(reply.body).toMatchObject({ id: 'alice-co', name: 'Publisher alice-co', status: 'PublisherStatusActive' });
    expect(reply.body.members).toEqual([
      { id: expect.any(String), role: 'owner', user: { id: alice.id, name: 'alice' } },
    ]);
    const nodes = await api.get('/publishers/alice-co/nodes');
    expect(nodes.status).toBe(200);
    expect(nodes.body.length).toBe(26);
    expect(nodes.body[0]).toMatchObject({ id: 'n01', publisher: { id: 'alice-co' } });
  });

  it('is 404 for an unknown publisher', async () => {
    expectError(await api.get('/publishers/nobody'), 404, 'not_found');
    expectError(await api.get('/publishers/nobody/nodes'), 404, 'not_found');
  });
  it('reads a query as written: the first of a repeated single parameter, encoded names and values, others dropped', async () => {
    const second = ids(await api.get('/nodes?limit=2&page=2'));
    expect(second).toHaveLength(2);
    expect(ids(await api.get('/nodes?limit=2&limit=9&pag%65=%32&extra=%ZZ'))).toEqual(second);
    const critic = await createUser(server, 'critic');
    const reviewed = await api.post('/nodes/n20/reviews?sta%72=%32&star=5', { token: critic.token });
    expect(reviewed.status).toBe(200);
    expect(reviewed.body.rating).toBe(2);
  });
});
