// Publish (operation 1) with the semantics of DESIGN.md §3, short of the upload itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPLOAD_URL_TTL_SECONDS } from '../../src/shared/tuning.js';
import { PublishResponse } from '../../src/contract/resources.js';
import { startServer, type TestServer } from '../helpers.js';
import { client, createPublisher, createUser, expectError, publish, type TestUser } from '../server/fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  alice = await createUser(server, 'alice');
  bob = await createUser(server, 'bob');
  await createPublisher(server, alice, 'alice-co');
  await createPublisher(server, bob, 'bob-co');
});
afterAll(() => server.close());

describe('POST /publishers/{publisherId}/nodes/{nodeId}/versions', () => {
  it('creates the node and a Pending version, answering 201 {node_version, signedUrl}', async () => {
    const before = Math.floor(Date.now() / 1000);
    const reply = await publish(server, alice.token, 'alice-co', 'relight-pack', '1.2.3', {
      node: {
        name: 'Relight pack',
        description: 'Relights images',
        author: 'Alice',
        tags: ['image'],
        license: 'LICENSE',
      },
      node_version: { changelog: 'first', dependencies: ['numpy>=1.0'], supported_os: ['linux'] },
    });
    expect(reply.status, reply.text).toBe(201);
    const body = PublishResponse.parse(reply.body);
    expect(body.node_version).toMatchObject({
      node_id: 'relight-pack',
      version: '1.2.3',
      changelog: 'first',
      dependencies: ['numpy>=1.0'],
      supported_os: ['linux'],
      status: 'NodeVersionStatusPending',
      deprecated: false,
    });
    expect(body.node_version.downloadUrl).toBeUndefined();
    const url = new URL(body.signedUrl);
    expect(`${url.protocol}//${url.host}`).toBe(server.url);
    expect(url.pathname).toBe(`/uploads/${body.node_version.id}`);
    expect(url.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);
    const expires = Number(url.searchParams.get('expires'));
    expect(expires).toBeGreaterThanOrEqual(before + UPLOAD_URL_TTL_SECONDS);
    expect(expires).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + UPLOAD_URL_TTL_SECONDS);

    const node = await api.get('/nodes/relight-pack', { token: alice.token });
    expect(node.body).toMatchObject({
      id: 'relight-pack',
      name: 'Relight pack',
      description: 'Relights images',
      author: 'Alice',
      tags: ['image'],
      status: 'NodeStatusActive',
      downloads: 0,
      rating: 0,
      publisher: { id: 'alice-co' },
    });
    // only Pending versions: no latest_version yet
    expect(node.body.latest_version).toBeUndefined();
  });

  it('normalises v1.2.3 to 1.2.3, 1.2 to 1.2.0 and 1 to 1.0.0, and refuses anything that is not a version', async () => {
    const reply = await publish(server, alice.token, 'alice-co', 'semver-node', 'v2.0.0-beta.1');
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.node_version.version).toBe('2.0.0-beta.1');
    for (const [short, full] of [
      ['1.2', '1.2.0'],
      ['v3', '3.0.0'],
    ]) {
      const completed = await publish(server, alice.token, 'alice-co', 'semver-node', short);
      expect(completed.status, completed.text).toBe(201);
      expect(completed.body.node_version.version).toBe(full);
    }
    for (const bad of ['1.2.3.4', '1.2.', '1.2.3+', '01.2.3', 'latest', '']) {
      const refused = await publish(server, alice.token, 'alice-co', 'semver-node', bad);
      expectError(refused, 400, 'invalid_request');
      expect(refused.body.details.map((d: { path: string }) => d.path)).toContain('node_version.version');
    }
  });

  it('answers a retry before any upload with 201 again, new pending fields and a fresh signed URL', async () => {
    const first = await publish(server, alice.token, 'alice-co', 'retry-node', '1.0.0', {
      node_version: { changelog: 'one', dependencies: ['a'], supported_os: ['linux'] },
    });
    expect(first.status).toBe(201);
    const second = await publish(server, alice.token, 'alice-co', 'retry-node', 'v1.0.0', {
      node_version: { changelog: 'two' },
    });
    expect(second.status, second.text).toBe(201);
    expect(second.body.node_version.id).toBe(first.body.node_version.id);
    expect(second.body.node_version.changelog).toBe('two');
    // replaced, not merged
    expect(second.body.node_version.dependencies).toEqual([]);
    expect(second.body.node_version.supported_os).toEqual([]);
    const expires = (reply: typeof first) => Number(new URL(reply.body.signedUrl).searchParams.get('expires'));
    expect(expires(second)).toBeGreaterThanOrEqual(expires(first));
    const versions = await api.get('/nodes/retry-node/versions', { token: alice.token });
    expect(versions.body).toHaveLength(1);
  });

  it('finds the node by any case and keeps the case it was first published in', async () => {
    expect((await publish(server, alice.token, 'alice-co', 'CamelNode', '1.0.0')).status).toBe(201);
    const again = await api.post('/publishers/alice-co/nodes/camelnode/versions', {
      token: alice.token,
      body: { node: { id: 'camelnode', description: 'lower' }, node_version: { version: '1.0.1' } },
    });
    expect(again.status, again.text).toBe(201);
    expect(again.body.node_version.node_id).toBe('CamelNode');
    const node = await api.get('/nodes/CAMELNODE');
    expect(node.body).toMatchObject({ id: 'CamelNode', description: 'lower' });
    // another publisher may not take the same id in another case
    const taken = await publish(server, bob.token, 'bob-co', 'camelNODE', '1.0.0');
    expectError(taken, 403, 'forbidden');
    expect(taken.body.message).toContain('alice-co');
  });

  it('is 403 naming the publisher for a node of another publisher, and leaves it untouched', async () => {
    const reply = await publish(server, bob.token, 'bob-co', 'relight-pack', '9.9.9', {
      node: { description: 'hijacked' },
    });
    expectError(reply, 403, 'forbidden');
    expect(reply.body.message).toContain('alice-co');
    const node = await api.get('/nodes/relight-pack');
    expect(node.body.description).toBe('Relights images');
  });

  it("is 409 naming the existing node for a look-alike of another publisher's node id, with nothing created", async () => {
    for (const lookalike of ['relight_pack', 'relight.pack', 'relight--pack', 'Relight_Pack']) {
      const reply = await publish(server, bob.token, 'bob-co', lookalike, '1.0.0');
      expectError(reply, 409, 'conflict');
      expect(reply.body.message).toBe(
        `node id ${lookalike} reads as node relight-pack of another publisher (ids compare in lower case, with _, . and runs of - as one -); choose another node id`,
      );
    }
    expect((await api.get('/publishers/bob-co/nodes')).body).toEqual([]);
  });

  it('is 404 for an unknown publisher, with nothing created', async () => {
    expectError(await publish(server, alice.token, 'no-such-co', 'orphan', '1.0.0'), 404, 'not_found');
    expectError(await api.get('/nodes/orphan'), 404, 'not_found');
  });

  it('is 400 when node.id differs from the path, or the path id is not a valid node id', async () => {
    const reply = await api.post('/publishers/alice-co/nodes/path-id/versions', {
      token: alice.token,
      body: { node: { id: 'body-id' }, node_version: { version: '1.0.0' } },
    });
    expectError(reply, 400, 'invalid_request');
    expect(reply.body.details).toEqual([{ path: 'node.id', message: expect.any(String) }]);
    expectError(await api.get('/nodes/path-id'), 404, 'not_found');
    const badPath = await api.post('/publishers/alice-co/nodes/-bad-/versions', {
      token: alice.token,
      body: { node_version: { version: '1.0.0' } },
    });
    expectError(badPath, 400, 'invalid_request');
  });

  it('is 400 for a missing node_version, a wrong type, or malformed JSON', async () => {
    expectError(
      await api.post('/publishers/alice-co/nodes/x1/versions', { token: alice.token, body: {} }),
      400,
      'invalid_request',
    );
    const typed = await api.post('/publishers/alice-co/nodes/x1/versions', {
      token: alice.token,
      body: { node: { tags: 'not-a-list' }, node_version: { version: '1.0.0' } },
    });
    expectError(typed, 400, 'invalid_request');
    expect(typed.body.details[0].path).toBe('node.tags');
    const malformed = await api.post('/publishers/alice-co/nodes/x1/versions', {
      token: alice.token,
      raw: '{"node_version": {',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'invalid_request');
    expect(malformed.body.message).toMatch(/malformed JSON/);
  });

  it('is 415 for a body that is not JSON and 413 past the JSON limit', async () => {
    const text = await api.post('/publishers/alice-co/nodes/x1/versions', {
      token: alice.token,
      raw: 'version=1',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(text, 415, 'unsupported_media_type');
    const big = await api.post('/publishers/alice-co/nodes/x1/versions', {
      token: alice.token,
      raw: JSON.stringify({ node_version: { version: '1.0.0', changelog: 'x'.repeat(26 * 1024 * 1024) } }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(big, 413, 'payload_too_large');
  });

  it('ignores a status and read-only fields in the node, and refuses different admin-only ones (403)', async () => {
    const reply = await publish(server, alice.token, 'alice-co', 'fields-node', '1.0.0', {
      node: { status: 'NodeStatusBanned', downloads: 1000, rating: 5, publisher: { id: 'bob-co' } },
    });
    expect(reply.status, reply.text).toBe(201);
    const node = await api.get('/nodes/fields-node');
    expect(node.body).toMatchObject({
      status: 'NodeStatusActive',
      downloads: 0,
      rating: 0,
      publisher: { id: 'alice-co' },
    });
    expectError(
      await publish(server, alice.token, 'alice-co', 'fields-node', '1.0.1', { node: { search_ranking: 99 } }),
      403,
      'forbidden',
    );
    expectError(
      await publish(server, alice.token, 'alice-co', 'fields-node', '1.0.1', { node: { tags_admin: ['trusted'] } }),
      403,
      'forbidden',
    );
    // the admin may set them on publish
    const admin = await publish(server, server.adminToken, 'alice-co', 'fields-node', '1.0.1', {
      node: { search_ranking: 99 },
    });
    expect(admin.status).toBe(201);
    expect((await api.get('/nodes/fields-node')).body.search_ranking).toBe(99);
  });

  it('brings a Deleted node back to Active when its publisher publishes again', async () => {
    expect((await publish(server, alice.token, 'alice-co', 'phoenix', '1.0.0')).status).toBe(201);
    const deleted = await api.put('/publishers/alice-co/nodes/phoenix', {
      token: alice.token,
      body: { status: 'NodeStatusDeleted' },
    });
    expect(deleted.body.status).toBe('NodeStatusDeleted');
    expectError(await api.get('/nodes/phoenix'), 404, 'not_found');
    expect((await api.get('/nodes/phoenix', { token: alice.token })).status).toBe(200);
    expect((await publish(server, alice.token, 'alice-co', 'phoenix', '1.0.1')).status).toBe(201);
    expect((await api.get('/nodes/phoenix')).body.status).toBe('NodeStatusActive');
  });
});
