// A user's lifecycle over HTTP (the [operate] issue): an admin lists, disables, enables and deletes
// users, named by id, e-mail or name, and lists and revokes any user's tokens. A disabled user's
// tokens are 403 at once; the last admin stays; a sole owner's publisher never loses its owner.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenList, User, UserPage } from '../../src/contract/resources.js';
import { startServer, type TestServer } from '../helpers.js';
import {
  addMember,
  client,
  createPat,
  createPublisher,
  createUser,
  expectError,
  type TestUser,
} from '../server/fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let admin: string;

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  admin = server.adminToken;
});
afterAll(() => server.close());

const as = (token: string) => ({ token });

describe('GET /users', () => {
  it('pages the users for an admin, oldest first, and is 403 for anyone else', async () => {
    const first = await createUser(server, 'lister-a');
    await createUser(server, 'lister-b');
    const all = UserPage.parse((await api.get('/users?limit=100', as(admin))).body);
    expect(all.users.map((u) => u.name)).toEqual(expect.arrayContaining(['admin', 'lister-a', 'lister-b']));
    expect(all.total).toBe(all.users.length);
    const paged = await api.get('/users?page=2&limit=1', as(admin));
    expect(paged.status).toBe(200);
    expect(UserPage.parse(paged.body)).toMatchObject({ page: 2, limit: 1, total: all.total, totalPages: all.total });
    expect(paged.body.users).toEqual([all.users[1]]);
    expectError(await api.get('/users', as(first.token)), 403, 'forbidden');
    expectError(await api.get('/users?limit=0', as(admin)), 400, 'invalid_request');
  });
});

describe('disabling a user', () => {
  it('refuses their user tokens and access tokens at once with a 403 that says so; enabling lets them back', async () => {
    const carol = await createUser(server, 'carol');
    await createPublisher(server, carol, 'carol-pub');
    const pat = await createPat(server, carol, 'carol-pub');
    expect((await api.get('/users/me', as(carol.token))).status).toBe(200); // its principal is now kept
    const disabled = await api.post('/users/carol@example.org/disable', as(admin));
    expect(disabled.status, disabled.text).toBe(200);
    expect(User.parse(disabled.body)).toMatchObject({ id: carol.id, disabled: true });
    for (const token of [carol.token, pat]) {
      const refused = await api.get('/users/me', as(token));
      expectError(refused, 403, 'forbidden');
      expect(refused.body.message).toContain('is disabled');
    }
    const listed = UserPage.parse((await api.get('/users?limit=100', as(admin))).body);
    expect(listed.users.find((u) => u.id === carol.id)?.disabled).toBe(true);
    expect((await api.post(`/users/${carol.id}/enable`, as(admin))).body.disabled).toBeUndefined();
    expect((await api.get('/users/me', as(carol.token))).status).toBe(200);
    expect((await api.get('/users/me', as(pat))).status).toBe(200);
  });

  it('is 404 for nobody, 409 for a name two users share, 403 for a non-admin', async () => {
    const dan = await createUser(server, 'dan');
    expectError(await api.post('/users/nobody-here/disable', as(admin)), 404, 'not_found');
    await createUser(server, 'twin');
    await createUser(server, 'twin');
    expectError(await api.post('/users/twin/disable', as(admin)), 409, 'conflict');
    expectError(await api.post(`/users/${dan.id}/disable`, as(dan.token)), 403, 'forbidden');
  });

  it('never disables or deletes the last enabled admin', async () => {
    const lone = await startServer();
    try {
      const reply = await client(lone).post('/users/admin/disable', as(lone.adminToken));
      expectError(reply, 409, 'conflict');
      expect(reply.body.message).toContain('last enabled admin');
      expectError(await client(lone).delete('/users/admin', as(lone.adminToken)), 409, 'conflict');
      // with a second admin, the first may go
      const second = await client(lone).post('/users', {
        token: lone.adminToken,
        body: { name: 'root2', admin: true },
      });
      expect((await client(lone).post('/users/admin/disable', as(second.body.token))).status).toBe(200);
      expectError(await client(lone).post('/users/root2/disable', as(second.body.token)), 409, 'conflict');
    } finally {
      await lone.close();
    }
  });
});

describe('deleting a user', () => {
  it('transfers memberships to another user, who keeps the higher role, and revokes every token', async () => {
    const erin = await createUser(server, 'erin');
    const frank = await createUser(server, 'frank');
    await createPublisher(server, erin, 'erin-solo');
    await createPublisher(server, erin, 'erin-shared');
    await addMember(server, erin, 'erin-shared', frank);
    const pat = await createPat(server, erin, 'erin-solo');
    const reply = await api.delete('/users/erin?transfer_to=frank@example.org', as(admin));
    expect(reply.status, reply.text).toBe(204);
    const me = await api.get('/users/me', as(frank.token));
    expect(me.body.publishers).toEqual(
      expect.arrayContaining([
        { id: 'erin-solo', role: 'owner' },
        { id: 'erin-shared', role: 'owner' },
      ]),
    );
    for (const token of [erin.token, pat]) expectError(await api.get('/users/me', as(token)), 401, 'unauthorized');
    const listed = UserPage.parse((await api.get('/users?limit=100', as(admin))).body);
    expect(listed.users.map((u) => u.id)).not.toContain(erin.id);
    expectError(await api.post('/users/erin/enable', as(admin)), 404, 'not_found');
  });

  it('refuses to delete a sole owner without a transfer, and a member without a choice, with the flags to pass', async () => {
    const gina = await createUser(server, 'gina');
    const hal = await createUser(server, 'hal');
    await createPublisher(server, gina, 'gina-pub');
    await addMember(server, gina, 'gina-pub', hal);
    const unsaid = await api.delete('/users/gina', as(admin));
    expectError(unsaid, 409, 'conflict');
    expect(unsaid.body.hint).toContain('--transfer-to');
    const sole = await api.delete('/users/gina?remove_memberships=true', as(admin));
    expectError(sole, 409, 'conflict');
    expect(sole.body.message).toContain('only owner of gina-pub');
    expectError(
      await api.delete('/users/gina?remove_memberships=true&transfer_to=hal', as(admin)),
      400,
      'invalid_request',
    );
    expectError(await api.delete('/users/gina?transfer_to=gina', as(admin)), 400, 'invalid_request');
    expect((await api.get('/users/me', as(gina.token))).status).toBe(200); // nothing happened
    // a member (not an owner) goes with remove_memberships
    expect((await api.delete('/users/hal?remove_memberships=true', as(admin))).status).toBe(204);
    const members = await api.get('/publishers/gina-pub', as(gina.token));
    expect(JSON.stringify(members.body)).not.toContain(hal.id);
  });
});

describe("an admin and any user's tokens", () => {
  let ivan: TestUser;
  beforeAll(async () => {
    ivan = await createUser(server, 'ivan');
    await createPublisher(server, ivan, 'ivan-pub');
    await createPat(server, ivan, 'ivan-pub', 'deploy');
  });

  it('lists them, user tokens and the access tokens they made', async () => {
    const reply = await api.get('/users/ivan/tokens', as(admin));
    expect(reply.status, reply.text).toBe(200);
    const tokens = TokenList.parse(reply.body);
    expect(tokens.map((t) => [t.kind, t.name, t.publisher_id])).toEqual(
      expect.arrayContaining([
        ['user', 'token', null],
        ['pat', 'deploy', 'ivan-pub'],
      ]),
    );
    expect(tokens).toHaveLength(2);
    expectError(await api.get(`/users/${ivan.id}/tokens`, as(ivan.token)), 403, 'forbidden');
  });

  it("revokes one: it stops working at once; another user's token id is 404", async () => {
    const own = TokenList.parse((await api.get('/users/ivan/tokens', as(admin))).body).find((t) => t.kind === 'user')!;
    const other = await createUser(server, 'judy');
    expectError(await api.delete(`/users/judy/tokens/${own.id}`, as(admin)), 404, 'not_found');
    expect((await api.get('/users/me', as(ivan.token))).status).toBe(200);
    expect((await api.delete(`/users/ivan/tokens/${own.id}`, as(admin))).status).toBe(204);
    expectError(await api.get('/users/me', as(ivan.token)), 401, 'unauthorized');
    expectError(await api.delete(`/users/ivan/tokens/${own.id}`, as(other.token)), 403, 'forbidden');
  });
});
