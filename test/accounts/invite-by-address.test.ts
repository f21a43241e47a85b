// Inviting by e-mail (issue 36): the answer is the same for an address an account has and one none
// has, and names no one; the invitation is kept against the address and becomes the user's when a
// user with it is created, signs in on the web pages, or reads their invitations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { runHints } from '../cli/hints.js';
import { startServer, type TestServer } from '../helpers.js';
import { webClient } from '../web/web-client.js';
import { call, client, createPublisher, createUser, expectError, type TestUser } from '../server/fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: TestUser;

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  owner = await createUser(server, 'addr-owner');
  await createPublisher(server, owner, 'addr-co');
});
afterAll(() => server.close());

const invite = (user: string, role = 'member') =>
  api.post('/publishers/addr-co/members', { token: owner.token, body: { user, role } });
const members = async () =>
  ((await api.get('/publishers/addr-co', { token: owner.token })).body.members as { user: { id: string } }[]).map(
    (m) => m.user.id,
  );

describe('inviting an e-mail address', () => {
  it('answers a registered and an unknown address alike, naming no one; the unknown one, once a user, joins', async () => {
    const bob = await createUser(server, 'addr-bob');
    const registered = await invite('addr-bob@example.org');
    const unknown = await invite('carol@example.org');
    expect(registered.status, registered.text).toBe(201);
    expect(unknown.status).toBe(registered.status);
    expect(unknown.text).toBe(registered.text);
    expect(registered.headers.get('content-type')).toBe(unknown.headers.get('content-type'));
    expect(registered.body).toEqual({
      publisher: { id: 'addr-co', name: 'Publisher addr-co' },
      role: 'member',
      status: 'pending',
    });
    expect(registered.text).not.toContain(bob.id);
    expect(registered.text).not.toContain('addr-bob');

    // bob's invitation is his once he reads his invitations; accepting it makes him a member
    const mine = await api.get('/users/me/invitations', { token: bob.token });
    expect(mine.body).toMatchObject([{ publisher: { id: 'addr-co' }, role: 'member', invited_by: { id: owner.id } }]);
    expect((await api.post('/users/me/invitations/addr-co/accept', { token: bob.token })).status).toBe(200);

    // carol has no account yet: the invitation waits for the address, and her creation claims it
    const created = await call(server.url, 'POST', '/users', {
      token: server.adminToken,
      body: { name: 'carol', email: 'Carol@Example.org' },
    });
    expect(created.status, created.text).toBe(201);
    const carol = created.body.user.id as string;
    expect(await server.server.store.listInvitations({ userId: carol })).toMatchObject([
      { publisher: { id: 'addr-co' }, role: 'member' },
    ]);
    const accepted = await api.post('/users/me/invitations/addr-co/accept', { token: created.body.token });
    expect(accepted.status, accepted.text).toBe(200);
    expect(await members()).toEqual(expect.arrayContaining([owner.id, bob.id, carol]));
    // the address's invitation is gone once claimed: a second user with that address gets nothing
    const twin = await call(server.url, 'POST', '/users', {
      token: server.adminToken,
      body: { name: 'carol2', email: 'carol@example.org' },
    });
    expect((await api.get('/users/me/invitations', { token: twin.body.token })).body).toEqual([]);
  });

  it('lets the owner withdraw an address invitation, and claims at web sign-in', async () => {
    await invite('dave@example.org');
    expect((await api.delete('/publishers/addr-co/members/dave@example.org', { token: owner.token })).status).toBe(204);
    expectError(
      await api.delete('/publishers/addr-co/members/dave@example.org', { token: owner.token }),
      404,
      'not_found',
    );
    await invite('erin@example.org', 'owner');
    const erin = await createUser(server, 'erin'); // claimed at creation
    expect(await server.server.store.listInvitations({ userId: erin.id })).toMatchObject([{ role: 'owner' }]);
    const dave = await createUser(server, 'dave');
    expect(await server.server.store.listInvitations({ userId: dave.id })).toEqual([]);

    // an address invited after the account was made is claimed when its user signs in on the web pages
    await invite('dave@example.org');
    await webClient(server).signIn(dave.token);
    expect(await server.server.store.listInvitations({ userId: dave.id })).toMatchObject([
      { publisher: { id: 'addr-co' } },
    ]);
  });

  it('`nodereg publisher members add` says whom it invited without telling whether an account has the address', async () => {
    const add = (address: string) =>
      runInProcess([
        '--registry',
        server.url,
        '--token',
        owner.token,
        'publisher',
        'members',
        'add',
        'addr-co',
        address,
      ]);
    const known = await add('addr-owner@example.org');
    const unknown = await add('frank@example.org');
    expect(known.code, known.stderr).toBe(0);
    expect(known.stdout).toBe('invited addr-owner@example.org to addr-co as member\n');
    expect(unknown.stdout).toBe('invited frank@example.org to addr-co as member\n');
    expect(unknown.stderr.replace('frank@', 'x@')).toBe(known.stderr.replace('addr-owner@', 'x@'));
    // as the hint says: once a user, frank sees the invitation with the first command and joins with the second
    const frank = await createUser(server, 'frank');
    const [invitations, accept] = await runHints(unknown.stderr, {
      env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: frank.token },
    });
    expect(invitations.argv).toEqual(['publisher', 'invitations', '--registry', server.url]);
    expect(invitations.result.stdout).toContain('addr-co');
    expect(accept.argv).toEqual(['publisher', 'accept', 'addr-co', '--registry', server.url]);
    expect(accept.result.code, accept.result.stderr).toBe(0);
    expect(await members()).toContain(frank.id);
  });
});
