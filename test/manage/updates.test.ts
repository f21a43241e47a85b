// Operations 2–5: partial node and publisher updates, version updates, reviews.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Node, NodeVersion, Publisher } from '../../src/contract/resources.js';
import { startServer, type TestServer } from '../helpers.js';
import {
  addMember,
  client,
  createPat,
  createPublisher,
  createUser,
  expectError,
  publish,
  type TestUser,
} from '../server/fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let alice: TestUser;
let bob: TestUser;

const fullNode = {
  name: 'Full node',
  author: 'Alice',
  description: 'Does everything',
  banner_url: 'https://example.org/banner.png',
  icon: 'https://example.org/icon.png',
  license: 'LICENSE',
  repository: 'https://example.org/repo',
  tags: ['image', 'video'],
  supported_os: ['linux', 'windows'],
  supported_accelerators: ['cuda'],
  supported_appui_version: '>=1.0',
  supported_appui_frontend_version: '>=2.0',
  preempted_app_node_names: ['OldNode'],
  translations: { fr: { name: 'Nœud complet' } },
  category: 'tools',
};

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  alice = await createUser(server, 'alice');
  bob = await createUser(server, 'bob');
  await createPublisher(server, alice, 'alice-co', {
    description: 'Alice makes nodes',
    website: 'https://alice.example',
  });
  await createPublisher(server, bob, 'bob-co');
  expect((await publish(server, alice.token, 'alice-co', 'full', '1.0.0', { node: fullNode })).status).toBe(201);
  expect((await publish(server, bob.token, 'bob-co', 'bobs', '1.0.0')).status).toBe(201);
});
afterAll(() => server.close());

describe('PUT /publishers/{publisherId}/nodes/{nodeId}', () => {
  it('changes only the fields present and answers the whole Node', async () => {
    const reply = await api.put('/publishers/alice-co/nodes/full', {
      token: alice.token,
      body: { description: 'Does more' },
    });
    expect(reply.status, reply.text).toBe(200);
    const node = Node.parse(reply.body);
    expect(node).toMatchObject({ ...fullNode, description: 'Does more', id: 'full', status: 'NodeStatusActive' });
  });

  it('clears an optional field with null', async () => {
    const reply = await api.put('/publishers/alice-co/nodes/full', {
      token: alice.token,
      body: { icon: null, tags: null },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.icon).toBe('');
    expect(reply.body.tags).toEqual([]); // cleared; lists are always sent, as the hosted registry does
    expect(reply.body.banner_url).toBe(fullNode.banner_url);
  });

  it('survives a GET-modify-PUT round trip: read-only fields ignored, equal admin-only values ignored', async () => {
    await api.put('/publishers/alice-co/nodes/full', {
      token: server.adminToken,
      body: { tags_admin: ['reviewed'], search_ranking: 3, repohost_stars: 40, status_detail: 'ok' },
    });
    const current = (await api.get('/nodes/full')).body;
    const reply = await api.put('/publishers/alice-co/nodes/full', {
      token: alice.token,
      body: {
        ...current,
        name: 'Renamed',
        downloads: 999,
        rating: 1,
        created_at: '2000-01-01T00:00:00Z',
        publisher: { id: 'bob-co' },
      },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      name: 'Renamed',
      downloads: current.downloads,
      rating: current.rating,
      created_at: current.created_at,
      publisher: { id: 'alice-co' },
    });
    expect(reply.body).toMatchObject({
      tags_admin: ['reviewed'],
      search_ranking: 3,
      repohost_stars: 40,
      status_detail: 'ok',
    });
  });

  it.each([
    ['tags_admin', ['trusted']],
    ['search_ranking', 100],
    ['repohost_stars', 1],
    ['status_detail', 'fine'],
    ['status', 'NodeStatusBanned'],
  ])('is 403 when a member changes the admin-only %s', async (field, value) => {
    const before = (await api.get('/nodes/full')).body;
    expectError(
      await api.put('/publishers/alice-co/nodes/full', { token: alice.token, body: { [field]: value, name: 'Never' } }),
      403,
      'forbidden',
    );
    expect((await api.get('/nodes/full')).body).toEqual(before);
  });

  it('lets a member delete and restore the node', async () => {
    const pat = await createPat(server, alice, 'alice-co');
    expect(
      (await api.put('/publishers/alice-co/nodes/full', { token: pat, body: { status: 'NodeStatusDeleted' } })).body
        .status,
    ).toBe('NodeStatusDeleted');
    expectError(await api.get('/nodes/full'), 404, 'not_found');
    expect((await api.get('/nodes/full', { token: pat })).status).toBe(200);
    expect(
      (await api.put('/publishers/alice-co/nodes/full', { token: pat, body: { status: 'NodeStatusActive' } })).body
        .status,
    ).toBe('NodeStatusActive');
  });

  it('is 400 for an id that differs, bad types, or a too long description', async () => {
    const differs = await api.put('/publishers/alice-co/nodes/full', { token: alice.token, body: { id: 'other' } });
    expectError(differs, 400, 'invalid_request');
    expect(differs.body.details[0].path).toBe('id');
    // the same id in another case is not the id of the path
    expectError(
      await api.put('/publishers/alice-co/nodes/full', { token: alice.token, body: { id: 'FULL' } }),
      400,
      'invalid_request',
    );
    expectError(
      await api.put('/publishers/alice-co/nodes/full', { token: alice.token, body: { downloads: 1, tags: [1] } }),
      400,
      'invalid_request',
    );
    expectError(
      await api.put('/publishers/alice-co/nodes/full', { token: alice.token, body: { description: 'x'.repeat(1001) } }),
      400,
      'invalid_request',
    );
    expectError(
      await api.put('/publishers/alice-co/nodes/full', { token: alice.token, body: { status: 'NodeStatusGone' } }),
      400,
      'invalid_request',
    );
  });

  it('is 404 for an unknown publisher or node, and for a node of another publisher', async () => {
    expectError(await api.put('/publishers/nope-co/nodes/full', { token: alice.token, body: {} }), 404, 'not_found');
    expectError(await api.put('/publishers/alice-co/nodes/nope', { token: alice.token, body: {} }), 404, 'not_found');
    const other = await api.put('/publishers/alice-co/nodes/bobs', { token: alice.token, body: { name: 'x' } });
    expectError(other, 404, 'not_found');
    expect(other.body.message).toContain('bob-co');
  });

  it('checks 404 before 403 before 400', async () => {
    expectError(
      await api.put('/publishers/alice-co/nodes/nope', { token: bob.token, body: { tags: 'bad' } }),
      404,
      'not_found',
    );
    expectError(
      await api.put('/publishers/alice-co/nodes/full', { token: bob.token, body: { tags: 'bad' } }),
      403,
      'forbidden',
    );
  });
});

describe('PUT /publishers/{publisherId}', () => {
  it('changes only the fields present, null clears, members and createdAt are ignored', async () => {
    const before = Publisher.parse((await api.get('/publishers/alice-co')).body);
    const reply = await api.put('/publishers/alice-co', {
      token: alice.token,
      body: { name: 'Alice & Co', website: null, members: [], createdAt: '2000-01-01T00:00:00Z', id: 'alice-co' },
    });
    expect(reply.status, reply.text).toBe(200);
    const after = Publisher.parse(reply.body);
    expect(after).toMatchObject({
      id: 'alice-co',
      name: 'Alice & Co',
      description: 'Alice makes nodes',
      createdAt: before.createdAt,
    });
    expect(reply.body.website).toBe('');
    expect(after.members).toHaveLength(1);
  });

  it('is 400 for an id that differs, 404 for an unknown publisher, 403 for a member', async () => {
    expectError(
      await api.put('/publishers/alice-co', { token: alice.token, body: { id: 'bob-co' } }),
      400,
      'invalid_request',
    );
    expectError(await api.put('/publishers/no-co', { token: alice.token, body: {} }), 404, 'not_found');
    await api.post('/publishers/alice-co/members', { token: alice.token, body: { user_id: bob.id } });
    expectError(await api.put('/publishers/alice-co', { token: bob.token, body: { name: 'x' } }), 403, 'forbidden');
    const pat = await createPat(server, alice, 'alice-co');
    expectError(await api.put('/publishers/alice-co', { token: pat, body: { name: 'x' } }), 403, 'forbidden');
    await api.delete(`/publishers/alice-co/members/${bob.id}`, { token: alice.token });
  });
});

describe('PUT /publishers/{publisherId}/nodes/{nodeId}/versions/{versionId}', () => {
  it('updates changelog and deprecated by semver or by id, leaving the rest', async () => {
    const published = await publish(server, alice.token, 'alice-co', 'versioned', '2.0.0', {
      node_version: { changelog: 'first', dependencies: ['x'] },
    });
    const id = published.body.node_version.id;
    const bySemver = await api.put('/publishers/alice-co/nodes/versioned/versions/v2.0.0', {
      token: alice.token,
      body: { changelog: 'better' },
    });
    expect(bySemver.status, bySemver.text).toBe(200);
    expect(NodeVersion.parse(bySemver.body)).toMatchObject({
      id,
      changelog: 'better',
      deprecated: false,
      dependencies: ['x'],
    });
    const byId = await api.put(`/publishers/alice-co/nodes/versioned/versions/${id}`, {
      token: alice.token,
      body: { deprecated: true },
    });
    expect(byId.body).toMatchObject({ id, changelog: 'better', deprecated: true, status: 'NodeVersionStatusPending' });
  });

  it('is 404 for an unknown version, and for a version id of another node', async () => {
    const other = await publish(server, alice.token, 'alice-co', 'other-node', '1.0.0');
    expectError(
      await api.put('/publishers/alice-co/nodes/versioned/versions/9.9.9', { token: alice.token, body: {} }),
      404,
      'not_found',
    );
    expectError(
      await api.put(`/publishers/alice-co/nodes/versioned/versions/${other.body.node_version.id}`, {
        token: alice.token,
        body: {},
      }),
      404,
      'not_found',
    );
  });

  it('keeps status and status_reason for admins: equal ignored, different 403; a member may only withdraw (Deleted)', async () => {
    const path = '/publishers/alice-co/nodes/versioned/versions/2.0.0';
    expect((await api.put(path, { token: alice.token, body: { status: 'NodeVersionStatusPending' } })).status).toBe(
      200,
    );
    expectError(
      await api.put(path, { token: alice.token, body: { status: 'NodeVersionStatusFlagged' } }),
      403,
      'forbidden',
    );
    expectError(await api.put(path, { token: alice.token, body: { status_reason: 'because' } }), 403, 'forbidden');
    const flagged = await api.put(path, {
      token: server.adminToken,
      body: { status: 'NodeVersionStatusFlagged', status_reason: 'looks odd' },
    });
    expect(flagged.body).toMatchObject({ status: 'NodeVersionStatusFlagged', status_reason: 'looks odd' });
    // a round trip of the current values works for the member
    expect((await api.put(path, { token: alice.token, body: { ...flagged.body, changelog: 'again' } })).status).toBe(
      200,
    );
    const withdrawn = await api.put(path, { token: alice.token, body: { status: 'NodeVersionStatusDeleted' } });
    expect(withdrawn.body.status).toBe('NodeVersionStatusDeleted');
    await api.put(path, { token: server.adminToken, body: { status: 'NodeVersionStatusBanned' } });
    expectError(
      await api.put(path, { token: alice.token, body: { status: 'NodeVersionStatusDeleted' } }),
      403,
      'forbidden',
    );
  });

  it('is 409 when an admin activates a version whose archive never arrived', async () => {
    const reply = await publish(server, alice.token, 'alice-co', 'versioned', '3.0.0');
    expect(reply.status).toBe(201);
    expectError(
      await api.put('/publishers/alice-co/nodes/versioned/versions/3.0.0', {
        token: server.adminToken,
        body: { status: 'NodeVersionStatusActive' },
      }),
      409,
      'conflict',
    );
  });

  it('is 400 for bad types', async () => {
    const reply = await api.put('/publishers/alice-co/nodes/versioned/versions/3.0.0', {
      token: alice.token,
      body: { deprecated: 'yes' },
    });
    expectError(reply, 400, 'invalid_request');
    expect(reply.body.details[0].path).toBe('deprecated');
  });
});

describe('POST /nodes/{nodeId}/reviews?star=N', () => {
  it('keeps one review per user (a second replaces the first) and rates with the mean', async () => {
    expect((await publish(server, alice.token, 'alice-co', 'rated', '1.0.0')).status).toBe(201);
    const carol = await createUser(server);
    let reply = await api.post('/nodes/rated/reviews?star=5', { token: bob.token });
    expect(reply.status, reply.text).toBe(200);
    expect(Node.parse(reply.body)).toMatchObject({ id: 'rated', rating: 5 });
    reply = await api.post('/nodes/rated/reviews?star=2', { token: carol.token });
    expect(reply.body.rating).toBe(3.5);
    reply = await api.post('/nodes/rated/reviews?star=4', { token: bob.token });
    expect(reply.body.rating).toBe(3);
    // a PAT reviews as the user who created it: carol's PAT of her own publisher replaces carol's review
    await createPublisher(server, carol, 'carol-co');
    const pat = await createPat(server, carol, 'carol-co');
    reply = await api.post('/nodes/RATED/reviews?star=1', { token: pat });
    expect(reply.body.rating).toBe(2.5);
    reply = await api.post('/nodes/rated/reviews?star=2', { token: carol.token });
    expect(reply.body.rating).toBe(3);
  });

  it("is 403 for the publisher's own members and tokens, and changes nothing (the rating stays the others')", async () => {
    const member = await createUser(server);
    await addMember(server, alice, 'alice-co', member, 'member');
    const pat = await createPat(server, alice, 'alice-co');
    for (const token of [alice.token, member.token, pat]) {
      const refused = await api.post('/nodes/rated/reviews?star=5', { token });
      expectError(refused, 403, 'forbidden');
      expect(refused.body.message).toBe('members of publisher alice-co may not review its nodes');
    }
    expect((await api.get('/nodes/rated')).body.rating).toBe(3);
  });

  it('is 400 for a star outside 1–5 or not an integer, 401 without a token, 404 for an unknown node first', async () => {
    for (const star of ['0', '6', '2.5', 'five', '', '0x3', '1e0']) {
      expectError(await api.post(`/nodes/rated/reviews?star=${star}`, { token: bob.token }), 400, 'invalid_request');
    }
    expectError(await api.post('/nodes/rated/reviews', { token: bob.token }), 400, 'invalid_request');
    expectError(await api.post('/nodes/rated/reviews?star=3'), 401, 'unauthorized');
    expectError(await api.post('/nodes/nope/reviews?star=9', { token: bob.token }), 404, 'not_found');
    expect((await api.get('/nodes/rated')).body.rating).toBe(3);
  });
});
