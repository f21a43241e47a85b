// Members by consent (issue 11): adding a member invites the user, who accepts; the owner names the
// user by id, e-mail or user name; no answer shows another user's e-mail to a non-admin; removing a
// member revokes the publisher tokens they created at once.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Invitation } from '../../src/contract/resources.js';
import { createTaskStore } from '../../src/server/proxy/store.js';
import { openDatabase } from '../../src/server/store/db.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import {
  call,
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
let owner: TestUser;
let zoe: TestUser;

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  owner = await createUser(server, 'inv-owner');
  zoe = await createUser(server, 'zoe');
});
afterAll(() => server.close());

const invite = (publisher: string, user: string, token = owner.token, role?: string) =>
  api.post(`/publishers/${publisher}/members`, { token, body: { user, ...(role ? { role } : {}) } });

describe('adding a member', () => {
  it('invites the user and shows no e-mail; the user is no member until they accept', async () => {
    await createPublisher(server, owner, 'consent-co');
    const reply = await invite('consent-co', zoe.id);
    expect(reply.status, reply.text).toBe(201);
    expect(Invitation.parse(reply.body)).toMatchObject({
      publisher: { id: 'consent-co' },
      user: { id: zoe.id, name: 'zoe' },
      role: 'member',
      status: 'pending',
      invited_by: { id: owner.id },
    });
    expect(reply.text).not.toContain('@example.org');
    // not a member yet: neither listed nor allowed to publish
    expect((await api.get('/publishers/consent-co', { token: owner.token })).body.members).toHaveLength(1);
    expectError(await publish(server, zoe.token, 'consent-co', 'zoe-node', '1.0.0'), 403, 'forbidden');
    // the owner sees it pending, without e-mails
    const pending = await api.get('/publishers/consent-co/invitations', { token: owner.token });
    expect(pending.body.map((i: Invitation) => i.user?.id)).toEqual([zoe.id]);
    expect(pending.text).not.toContain('@');

    const mine = await api.get('/users/me/invitations', { token: zoe.token });
    expect(mine.body).toMatchObject([
      {
        publisher: { id: 'consent-co', name: 'Publisher consent-co' },
        role: 'member',
        invited_by: { name: 'inv-owner' },
      },
    ]);
    const accepted = await api.post('/users/me/invitations/consent-co/accept', { token: zoe.token });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body).toMatchObject({ role: 'member', user: { id: zoe.id, email: 'zoe@example.org' } });
    expect((await api.get('/users/me/invitations', { token: zoe.token })).body).toEqual([]);
    expect((await publish(server, zoe.token, 'consent-co', 'zoe-node', '1.0.0')).status).toBe(201);
    // accepting twice finds nothing
    expectError(await api.post('/users/me/invitations/consent-co/accept', { token: zoe.token }), 404, 'not_found');
  });

  it('names the user by id or user name, or invites an e-mail address (any case); an unknown or shared name is refused', async () => {
    await createPublisher(server, owner, 'naming-co');
    const yan = await createUser(server, 'yan');
    for (const name of [yan.id, 'yan']) {
      const reply = await invite('naming-co', name);
      expect(reply.status, `${name}: ${reply.text}`).toBe(201);
      expect(reply.body.user).toEqual({ id: yan.id, name: 'yan' });
    }
    expect((await api.get('/publishers/naming-co/invitations', { token: owner.token })).body).toHaveLength(1);
    // an address names no one (invite-by-address.test.ts), and becomes yan's when yan reads their invitations
    expect((await invite('naming-co', 'YAN@example.org')).body.user).toBeUndefined();
    expect((await api.get('/users/me/invitations', { token: yan.token })).body).toHaveLength(1);
    expectError(await invite('naming-co', 'nobody'), 404, 'not_found');
    await call(server.url, 'POST', '/users', { token: server.adminToken, body: { name: 'twin' } });
    await call(server.url, 'POST', '/users', { token: server.adminToken, body: { name: 'twin' } });
    const shared = await invite('naming-co', 'twin');
    expectError(shared, 409, 'conflict');
    expect(shared.body.hint).toMatch(/id or e-mail/);
    expectError(
      await api.post('/publishers/naming-co/members', { token: owner.token, body: { role: 'member' } }),
      400,
      'invalid_request',
    );
  });

  it('lets the user decline, and the owner withdraw; a PAT may do neither', async () => {
    await createPublisher(server, owner, 'decline-co');
    const xi = await createUser(server, 'xi');
    await invite('decline-co', 'xi');
    const pat = await createPat(server, owner, 'decline-co');
    expectError(await api.get('/users/me/invitations', { token: pat }), 403, 'forbidden');
    expectError(await api.post('/users/me/invitations/decline-co/accept', { token: pat }), 403, 'forbidden');
    expect((await api.delete('/users/me/invitations/decline-co', { token: xi.token })).status).toBe(204);
    expectError(await api.post('/users/me/invitations/decline-co/accept', { token: xi.token }), 404, 'not_found');
    await invite('decline-co', 'xi');
    expect((await api.delete(`/publishers/decline-co/members/${xi.id}`, { token: owner.token })).status).toBe(204);
    expect((await api.get('/users/me/invitations', { token: xi.token })).body).toEqual([]);
  });
});

describe('e-mails', () => {
  it('a fellow member sees them, a stranger and a mere invitee do not', async () => {
    await createPublisher(server, owner, 'mail-co');
    const stranger = await createUser(server, 'stranger');
    await invite('mail-co', stranger.id);
    for (const token of [undefined, stranger.token]) {
      expect((await api.get('/publishers/mail-co', { token })).text, String(token)).not.toContain('@example.org');
    }
    expect((await api.get('/publishers/mail-co', { token: owner.token })).text).toContain('inv-owner@example.org');
  });
});

describe('removing a member', () => {
  it('revokes the publisher tokens they created: their PAT stops publishing at once', async () => {
    await createPublisher(server, owner, 'revoke-co');
    const will = await createUser(server, 'will');
    await invite('revoke-co', will.id, owner.token, 'owner');
    expect((await api.post('/users/me/invitations/revoke-co/accept', { token: will.token })).status).toBe(200);
    const willsPat = await createPat(server, will, 'revoke-co', 'will-ci');
    const ownersPat = await createPat(server, owner, 'revoke-co', 'owner-ci');
    expect((await publish(server, willsPat, 'revoke-co', 'rev-node', '1.0.0')).status).toBe(201);

    expect((await api.delete(`/publishers/revoke-co/members/${will.id}`, { token: owner.token })).status).toBe(204);
    expectError(await publish(server, willsPat, 'revoke-co', 'rev-node', '1.0.1'), 401, 'unauthorized');
    const left = (await api.get('/publishers/revoke-co/tokens', { token: owner.token })).body.map(
      (t: { name: string }) => t.name,
    );
    expect(left).toEqual(['owner-ci']);
    expect((await publish(server, ownersPat, 'revoke-co', 'rev-node', '1.0.1')).status).toBe(201);
  });
});

describe('withdrawing an invitation', () => {
  it('the invitee accepting between the check and the withdrawal: the 204 still leaves them out', async () => {
    // The accept lands just before the route withdraws the invitation (a race, made certain here).
    const db = openDatabase(join(tempDir(), 'registry.db'));
    const store = createSqliteRegistryStore(db);
    const removeInvitation = store.removeInvitation;
    store.removeInvitation = async (publisherId, userId) => {
      await store.acceptInvitation(publisherId, userId);
      return removeInvitation(publisherId, userId);
    };
    const raced = await startServer({ database: { store, tasks: createTaskStore(db), close: () => void db.close() } });
    try {
      const boss = await createUser(raced, 'boss');
      const eve = await createUser(raced, 'eve');
      await createPublisher(raced, boss, 'raced-co');
      expect(
        (
          await call(raced.url, 'POST', '/publishers/raced-co/members', {
            token: boss.token,
            body: { user: eve.id, role: 'owner' },
          })
        ).status,
      ).toBe(201);
      expect(
        (await call(raced.url, 'DELETE', `/publishers/raced-co/members/${eve.id}`, { token: boss.token })).status,
      ).toBe(204);
      const members = (await call(raced.url, 'GET', '/publishers/raced-co', { token: boss.token })).body.members;
      expect(members.map((m: { user: { id: string } }) => m.user.id)).toEqual([boss.id]);
      expectError(
        await call(raced.url, 'PUT', '/publishers/raced-co', { token: eve.token, body: { name: 'taken' } }),
        403,
        'forbidden',
      );
    } finally {
      await raced.close();
    }
  });

  it('a stranger cannot tell whom an owner invited: 403 alike for an invitee and for anyone else', async () => {
    await createPublisher(server, owner, 'secret-co');
    const invitee = await createUser(server, 'invitee');
    const stranger = await createUser(server, 'stranger');
    await invite('secret-co', invitee.id);
    for (const userId of [invitee.id, stranger.id, 'no-such-user']) {
      expectError(
        await api.delete(`/publishers/secret-co/members/${userId}`, { token: stranger.token }),
        403,
        'forbidden',
      );
    }
    expectError(
      await api.delete(`/publishers/secret-co/members/${stranger.id}`, { token: owner.token }),
      404,
      'not_found',
    );
    expect(
      (await api.get('/publishers/secret-co/invitations', { token: owner.token })).body.map(
        (i: Invitation) => i.user?.id,
      ),
    ).toEqual([invitee.id]);
  });
});
