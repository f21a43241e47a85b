// The kept answers of GET /nodes/{id} and the kept authentications (src/server/node-answers.ts,
// src/server/accounts/admin.ts): every write through any route is seen by the next read, the ETag
// follows the bytes (304 while they are the same), and a revoked token is refused at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneNodeView } from '../../../src/server/views.js';
import { startServer, type TestServer } from '../../helpers.js';
import { client, createPublisher, createUser, expectError, publishAndUpload, type TestUser } from '../fixtures.js';

let server: TestServer;
let alice: TestUser;
/** Reviews the nodes: alice, their publisher's owner, may not rate her own nodes. */
let reader: TestUser;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startServer();
  alice = await createUser(server, 'alice');
  reader = await createUser(server, 'reader');
  api = client(server);
  await createPublisher(server, alice, 'alice-co');
  await publishAndUpload(server, alice.token, 'alice-co', 'cached', '1.0.0');
});
afterAll(() => server.close());

describe('GET /nodes/{id}/versions after a write', () => {
  it('shows every write to a version at once, and the findings only to members who ask', async () => {
    await publishAndUpload(server, alice.token, 'alice-co', 'listed', '1.0.0');
    const list = async (token?: string, query = '') => {
      const [first, second] = [
        await api.get(`/nodes/listed/versions${query}`, { token }),
        await api.get(`/nodes/listed/versions${query}`, { token }),
      ];
      expect(second.text).toBe(first.text);
      return first.body as {
        version: string;
        changelog: string;
        deprecated?: boolean;
        status: string;
        findings?: unknown;
      }[];
    };
    expect((await list()).map((v) => v.version)).toEqual(['1.0.0']);
    await publishAndUpload(server, alice.token, 'alice-co', 'listed', '1.10.0');
    expect((await list()).map((v) => v.version)).toEqual(['1.10.0', '1.0.0']);
    expect(
      (
        await api.put('/publishers/alice-co/nodes/listed/versions/1.0.0', {
          token: alice.token,
          body: { changelog: 'first', deprecated: true },
        })
      ).status,
    ).toBe(200);
    expect((await list())[1]).toMatchObject({ version: '1.0.0', changelog: 'first', deprecated: true });
    expect(
      (
        await api.put('/publishers/alice-co/nodes/listed/versions/1.10.0', {
          token: server.adminToken,
          body: { status: 'NodeVersionStatusFlagged' },
        })
      ).status,
    ).toBe(200);
    expect((await list())[0]).toMatchObject({ version: '1.10.0', status: 'NodeVersionStatusFlagged' });
    // a member asking for the findings gets them; the list kept for everyone has none
    expect((await list(alice.token, '?include_status_reason=true'))[0].findings).toEqual([]);
    expect((await list())[0].findings).toBeUndefined();
  });
});

describe('GET /nodes/{id} after a write', () => {
  /** Reads the node twice (the second from the kept answer) and returns it. */
  const read = async (token?: string) => {
    const first = await api.get('/nodes/cached', { token });
    const second = await api.get('/nodes/cached', { token });
    expect(second.text).toBe(first.text);
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    return first;
  };

  it('shows every write at once, through each route that changes the answer', async () => {
    let before = await read();
    const changed = async (what: string, check: (body: any) => void, token?: string) => {
      const after = await read(token);
      check(after.body);
      expect(after.headers.get('etag'), what).not.toBe(before.headers.get('etag'));
      before = after;
    };

    expect(
      (
        await api.put('/publishers/alice-co/nodes/cached', {
          token: alice.token,
          body: { description: 'Relights portraits' },
        })
      ).status,
    ).toBe(200);
    await changed('node update', (node) => expect(node.description).toBe('Relights portraits'));

    expect((await api.post('/nodes/cached/reviews?star=4', { token: reader.token })).status).toBe(200);
    await changed('review', (node) => expect(node.rating).toBe(4));

    await publishAndUpload(server, alice.token, 'alice-co', 'cached', '1.1.0');
    await changed('new version', (node) => expect(node.latest_version.version).toBe('1.1.0'));

    const deprecated = await api.put('/publishers/alice-co/nodes/cached/versions/1.1.0', {
      token: alice.token,
      body: { deprecated: true },
    });
    expect(deprecated.status, deprecated.text).toBe(200);
    await changed('version update', (node) => expect(node.latest_version.version).toBe('1.0.0'));

    expect((await api.put('/publishers/alice-co', { token: alice.token, body: { name: 'Alice and Co' } })).status).toBe(
      200,
    );
    await changed('publisher update', (node) => expect(node.publisher.name).toBe('Alice and Co'));

    // a download counts once the archive has been served whole (not at /install)
    const install = await api.get('/nodes/cached/install');
    expect(install.status).toBe(200);
    await (await fetch(install.body.downloadUrl)).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await changed('download', (node) => expect(node.downloads).toBe(1));

    expect(
      (
        await api.put('/publishers/alice-co/nodes/cached', {
          token: server.adminToken,
          body: { status: 'NodeStatusBanned' },
        })
      ).status,
    ).toBe(200);
    expectError(await api.get('/nodes/cached'), 403, 'banned');
    await changed('status', (node) => expect(node.status).toBe('NodeStatusBanned'), server.adminToken);
    expect(
      (
        await api.put('/publishers/alice-co/nodes/cached', {
          token: server.adminToken,
          body: { status: 'NodeStatusActive' },
        })
      ).status,
    ).toBe(200);
    await changed('status again', (node) => expect(node.status).toBe('NodeStatusActive'));
  });

  it('answers 304 to If-None-Match with the current ETag, and 200 with the bytes once they changed', async () => {
    const current = await api.get('/nodes/cached');
    const etag = current.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const unchanged = await api.get('/nodes/cached', { headers: { 'if-none-match': `"other", ${etag}` } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');
    expect(unchanged.headers.get('etag')).toBe(etag);
    expect((await api.get('/nodes/cached', { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    expect((await api.post('/nodes/cached/reviews?star=2', { token: reader.token })).status).toBe(200);
    const changed = await api.get('/nodes/cached', { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.body.rating).toBe(2);
  });

  it('answers a review with the node as the next read shows it', async () => {
    const reviewed = await api.post('/nodes/cached/reviews?star=5', { token: reader.token });
    expect(reviewed.status).toBe(200);
    const read = await api.get('/nodes/cached');
    expect(read.text).toBe(reviewed.text);
    expect(read.body.rating).toBe(5);
  });

  it('answers a review with the node as built afresh from the store, whether an answer was kept or not', async () => {
    await publishAndUpload(server, alice.token, 'alice-co', 'fresh', '1.0.0');
    const bob = await createUser(server, 'bob');
    /** The node's answer built from the store alone, as a read with nothing kept would build it. */
    const built = async (id: string) => {
      const { store } = server.server;
      return JSON.stringify(await oneNodeView(store, (await store.getNode(id))!, server.server.publicUrl()));
    };
    const review = async (id: string, star: number, token: string) => {
      const reply = await api.post(`/nodes/${id}/reviews?star=${star}`, { token });
      expect(reply.status, reply.text).toBe(200);
      expect(reply.text).toBe(await built(id));
      const read = await api.get(`/nodes/${id}`);
      expect(read.text).toBe(reply.text);
      expect(read.headers.get('etag')).toBe(reply.headers.get('etag'));
      return reply;
    };
    // nothing kept for this node yet: the first review builds its answer
    expect((await review('fresh', 2, reader.token)).body.rating).toBe(2);
    // kept (by the review and by the read after it): the next ones derive theirs from it
    expect((await review('fresh', 5, bob.token)).body.rating).toBe(3.5);
    expect((await review('fresh', 1, reader.token)).body.rating).toBe(3);
    const same = await review('fresh', 1, reader.token);
    expect(same.body.rating).toBe(3);
    // another write between two reviews: the kept answer is not the one before the review, so it is built again
    expect(
      (await api.put('/publishers/alice-co/nodes/fresh', { token: alice.token, body: { description: 'Newer words' } }))
        .status,
    ).toBe(200);
    const after = await review('fresh', 4, bob.token);
    expect(after.body).toMatchObject({ rating: 2.5, description: 'Newer words' });
  });
});

describe('kept authentications', () => {
  it('refuse a revoked token at once, also one used a moment before', async () => {
    const created = await api.post('/users/me/tokens', { token: reader.token, body: { name: 'laptop' } });
    expect(created.status, created.text).toBe(201);
    const token = created.body.token as string;
    for (let i = 0; i < 3; i++) expect((await api.get('/users/me', { token })).status).toBe(200);
    expect((await api.post('/nodes/cached/reviews?star=3', { token })).status).toBe(200);
    expect((await api.delete(`/users/me/tokens/${created.body.id}`, { token: reader.token })).status).toBe(204);
    expectError(await api.get('/users/me', { token }), 401, 'unauthorized');
    expectError(await api.post('/nodes/cached/reviews?star=3', { token }), 401, 'unauthorized');
    expect((await api.get('/users/me', { token: alice.token })).status).toBe(200);
  });
});
