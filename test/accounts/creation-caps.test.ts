// `serve --caps`: what one account may create. A script cannot fill a registry with publishers, nodes,
// versions that never get an archive, or invitations; admins are not capped, and a retry creates nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCaps } from '../../src/cli/serve/values.js';
import { startServer, type TestServer } from '../helpers.js';
import {
  client,
  createPat,
  createPublisher,
  createUser,
  expectError,
  makeZip,
  publish,
  uploadTo,
  type TestUser,
} from '../server/fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let alice: TestUser;

beforeAll(async () => {
  server = await startServer({ caps: { publishers: 2, nodes: 2, pendingVersions: 2, invitations: 1 } });
  api = client(server);
  alice = await createUser(server, 'alice');
});
afterAll(() => server.close());

describe('creation caps', () => {
  it('a user owns at most `publishers` publishers; the refusal names the cap and the flag, and creates nothing', async () => {
    await createPublisher(server, alice, 'alice-one');
    await createPublisher(server, alice, 'alice-two');
    const refused = await api.post('/publishers', { token: alice.token, body: { id: 'alice-three' } });
    expectError(refused, 403, 'forbidden');
    expect(refused.body.message).toBe('you own 2 publishers already (at most 2 on this registry)');
    expect(refused.body.hint).toContain('serve --caps publishers=N');
    expectError(await api.get('/publishers/alice-three'), 404, 'not_found');
    // an admin is not capped
    expect((await api.post('/publishers', { token: server.adminToken, body: { id: 'admin-one' } })).status).toBe(201);
  });

  it('a publisher holds at most `nodes` nodes and `pending` versions waiting for their archive; a retry and an upload free nothing twice', async () => {
    const pat = await createPat(server, alice, 'alice-one');
    const first = await publish(server, pat, 'alice-one', 'node-a', '1.0.0');
    expect(first.status).toBe(201);
    expect((await publish(server, pat, 'alice-one', 'node-b', '1.0.0')).status).toBe(201);
    // two versions wait for their archive: a third version is refused, a retry of one of them is not
    const pending = await publish(server, pat, 'alice-one', 'node-a', '1.1.0');
    expectError(pending, 403, 'forbidden');
    expect(pending.body.message).toContain('publisher alice-one has 2 versions waiting for their archive already');
    expect((await publish(server, pat, 'alice-one', 'node-a', '1.0.0')).status).toBe(201);
    // uploading one frees a place
    expect((await uploadTo(first.body.signedUrl, await makeZip({ '__init__.py': '' }))).status).toBe(200);
    expect((await publish(server, pat, 'alice-one', 'node-a', '1.1.0')).status).toBe(201);
    // a third node is refused, whatever waits
    const node = await publish(server, pat, 'alice-one', 'node-c', '1.0.0');
    expectError(node, 403, 'forbidden');
    expect(node.body.message).toBe('publisher alice-one holds 2 nodes already (at most 2 on this registry)');
    expectError(await api.get('/nodes/node-c'), 404, 'not_found');
  });

  it('a publisher has at most `invitations` invitations out; a role change of a member is not one', async () => {
    const [bob, carol] = [await createUser(server, 'bob'), await createUser(server, 'carol')];
    const invite = (user: TestUser) =>
      api.post('/publishers/alice-two/members', { token: alice.token, body: { user: user.id, role: 'member' } });
    expect((await invite(bob)).status).toBe(201);
    const refused = await invite(carol);
    expectError(refused, 403, 'forbidden');
    expect(refused.body.message).toBe('publisher alice-two has 1 invitations out already (at most 1 on this registry)');
    expect((await api.get('/publishers/alice-two/invitations', { token: alice.token })).body).toHaveLength(1);
  });

  it('serve --caps reads WORD=N pairs and names what is wrong', () => {
    expect(parseCaps('publishers=20, nodes=500,pending=7,invitations=3')).toEqual({
      publishers: 20,
      nodes: 500,
      pendingVersions: 7,
      invitations: 3,
    });
    for (const bad of ['nodes=0', 'nodes', 'stars=2', 'nodes=-1', 'nodes=1x', ''])
      expect(() => parseCaps(bad), bad).toThrow(/--caps takes WORD=N pairs/);
  });
});
