// Accounts of DESIGN.md §3 against a real server: /users/me in both shapes, /users, user tokens,
// publishers, publisher tokens and members with the last-owner rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_PREFIX, TOKEN_SHOWN_PREFIX, TOKENS_MAX } from '../../src/contract/limits.js';
import { CreatedToken, CreatedUser, Me, Publisher, Invitation, TokenList } from '../../src/contract/resources.js';
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
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  alice = await createUser(server, 'alice');
  bob = await createUser(server, 'bob');
});
afterAll(() => server.close());

describe('GET /users/me', () => {
  it('answers the user shape for a user token, with the publishers and roles', async () => {
    await createPublisher(server, alice, 'me-pub');
    const reply = await api.get('/users/me', { token: alice.token });
    expect(reply.status).toBe(200);
    expect(Me.parse(reply.body)).toEqual({
      kind: 'user',
      user: { id: alice.id, name: 'alice', email: 'alice@example.org', admin: false },
      publishers: [{ id: 'me-pub', role: 'owner' }],
    });
  });

  it('answers the pat shape for a personal access token', async () => {
    const pat = await createPat(server, alice, 'me-pub', 'deploy');
    const reply = await api.get('/users/me', { token: pat });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      kind: 'pat',
      publisher: { id: 'me-pub' },
      token: { id: expect.any(String), name: 'deploy' },
      user: { id: alice.id, name: 'alice' },
    });
  });

  it('says the admin is an admin', async () => {
    const reply = await api.get('/users/me', { token: server.adminToken });
    expect(reply.body.user.admin).toBe(true);
  });

  it('is 401 without a token, with an unknown token and with a malformed header', async () => {
    expectError(await api.get('/users/me'), 401, 'unauthorized');
    expectError(await api.get('/users/me', { token: `${TOKEN_PREFIX.user}unknown` }), 401, 'unauthorized');
    expectError(await api.get('/users/me', { headers: { authorization: 'Basic abc' } }), 401, 'unauthorized');
  });
});

describe('POST /users', () => {
  it('lets the admin create a user and answers its first token once', async () => {
    const reply = await api.post('/users', { token: server.adminToken, body: { name: 'carol' } });
    expect(reply.status).toBe(201);
    const created = CreatedUser.parse(reply.body);
    expect(created.user).toMatchObject({ name: 'carol', admin: false });
    expect(created.token.startsWith(TOKEN_PREFIX.user)).toBe(true);
    // at least 32 random bytes, base64url
    expect(created.token.slice(TOKEN_PREFIX.user.length)).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    const me = await api.get('/users/me', { token: created.token });
    expect(me.body.user.id).toBe(created.user.id);
  });

  it('is 403 for anyone but the admin, 401 without a token, 400 for a bad body', async () => {
    expectError(await api.post('/users', { token: alice.token, body: { name: 'x' } }), 403, 'forbidden');
    expectError(await api.post('/users', { body: { name: 'x' } }), 401, 'unauthorized');
    const bad = await api.post('/users', { token: server.adminToken, body: { name: '', email: 'not-an-email' } });
    expectError(bad, 400, 'invalid_request');
    expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['email', 'name']);
  });
});

describe('user tokens', () => {
  it('creates, lists (with last_used_at and prefix) and revokes your own tokens', async () => {
    const created = await api.post('/users/me/tokens', { token: alice.token, body: { name: 'laptop' } });
    expect(created.status).toBe(201);
    const token = CreatedToken.parse(created.body);
    expect(token.token.startsWith(TOKEN_PREFIX.user)).toBe(true);

    let list = TokenList.parse((await api.get('/users/me/tokens', { token: alice.token })).body);
    const entry = list.find((t) => t.id === token.id)!;
    expect(entry).toMatchObject({
      name: 'laptop',
      prefix: token.token.slice(0, TOKEN_SHOWN_PREFIX),
      last_used_at: null,
    });
    expect(JSON.stringify(list)).not.toContain(token.token);

    expect((await api.get('/users/me', { token: token.token })).status).toBe(200);
    list = TokenList.parse((await api.get('/users/me/tokens', { token: alice.token })).body);
    expect(list.find((t) => t.id === token.id)!.last_used_at).toEqual(expect.any(String));

    const removed = await api.delete(`/users/me/tokens/${token.id}`, { token: alice.token });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expectError(await api.get('/users/me', { token: token.token }), 401, 'unauthorized');
    list = TokenList.parse((await api.get('/users/me/tokens', { token: alice.token })).body);
    expect(list.some((t) => t.id === token.id)).toBe(false);
  });

  it("is 404 for someone else's token or an unknown one, and a token is revoked once", async () => {
    const bobs = CreatedToken.parse(
      (await api.post('/users/me/tokens', { token: bob.token, body: { name: 'b' } })).body,
    );
    expectError(await api.delete(`/users/me/tokens/${bobs.id}`, { token: alice.token }), 404, 'not_found');
    expectError(await api.delete('/users/me/tokens/nope', { token: alice.token }), 404, 'not_found');
    expect((await api.get('/users/me', { token: bobs.token })).status).toBe(200);
    expect((await api.delete(`/users/me/tokens/${bobs.id}`, { token: bob.token })).status).toBe(204);
    expectError(await api.delete(`/users/me/tokens/${bobs.id}`, { token: bob.token }), 404, 'not_found');
  });

  it('is 403 with a personal access token (it acts for its publisher only)', async () => {
    const pat = await createPat(server, alice, 'me-pub');
    expectError(await api.get('/users/me/tokens', { token: pat }), 403, 'forbidden');
    expectError(await api.post('/users/me/tokens', { token: pat, body: { name: 'x' } }), 403, 'forbidden');
  });

  it('is 400 for a bad name', async () => {
    expectError(await api.post('/users/me/tokens', { token: alice.token, body: { name: '' } }), 400, 'invalid_request');
  });
});

describe('POST /publishers', () => {
  it('creates a publisher with the caller as owner (201), then 409 for the same id', async () => {
    const reply = await api.post('/publishers', {
      token: bob.token,
      body: { id: 'bobs-nodes', name: 'Bob', website: 'https://bob.example', members: [{ ignored: true }] },
    });
    expect(reply.status).toBe(201);
    const publisher = Publisher.parse(reply.body);
    expect(publisher).toMatchObject({
      id: 'bobs-nodes',
      name: 'Bob',
      website: 'https://bob.example',
      status: 'PublisherStatusActive',
    });
    expect(publisher.members).toEqual([
      { id: expect.any(String), role: 'owner', user: { id: bob.id, name: 'bob', email: 'bob@example.org' } },
    ]);
    const again = await api.post('/publishers', { token: alice.token, body: { id: 'bobs-nodes' } });
    expectError(again, 409, 'conflict');
  });

  it('is 400 for an invalid id, 401 without a token, 403 with a PAT or a Banned status from a non-admin', async () => {
    const bad = await api.post('/publishers', { token: bob.token, body: { id: 'Bad_Id' } });
    expectError(bad, 400, 'invalid_request');
    expect(bad.body.details[0].path).toBe('id');
    expectError(await api.post('/publishers', { body: { id: 'anon-pub' } }), 401, 'unauthorized');
    const pat = await createPat(server, bob, 'bobs-nodes');
    expectError(await api.post('/publishers', { token: pat, body: { id: 'pat-pub' } }), 403, 'forbidden');
    expectError(
      await api.post('/publishers', { token: bob.token, body: { id: 'bad-pub', status: 'PublisherStatusBanned' } }),
      403,
      'forbidden',
    );
    // the current value (Active) is accepted
    expect(
      (await api.post('/publishers', { token: bob.token, body: { id: 'ok-pub', status: 'PublisherStatusActive' } }))
        .status,
    ).toBe(201);
  });

  it('hides member e-mails from those who are not members', async () => {
    const anonymous = await api.get('/publishers/bobs-nodes');
    expect(anonymous.body.members[0].user).toEqual({ id: bob.id, name: 'bob' });
    const asAlice = await api.get('/publishers/bobs-nodes', { token: alice.token });
    expect(asAlice.body.members[0].user.email).toBeUndefined();
    const asAdmin = await api.get('/publishers/bobs-nodes', { token: server.adminToken });
    expect(asAdmin.body.members[0].user.email).toBe('bob@example.org');
  });
});

describe('publisher tokens', () => {
  it('the owner creates, lists and revokes PATs; a revoked PAT stops working', async () => {
    await createPublisher(server, alice, 'tok-pub');
    const created = await api.post('/publishers/tok-pub/tokens', { token: alice.token, body: { name: 'github' } });
    expect(created.status).toBe(201);
    const pat = CreatedToken.parse(created.body);
    expect(pat.token.startsWith(TOKEN_PREFIX.pat)).toBe(true);
    expect(pat.token.slice(TOKEN_PREFIX.pat.length)).toMatch(/^[A-Za-z0-9_-]{43,}$/);

    const list = await api.get('/publishers/tok-pub/tokens', { token: alice.token });
    expect(list.status).toBe(200);
    expect(TokenList.parse(list.body)).toEqual([
      {
        id: pat.id,
        name: 'github',
        created_at: pat.created_at,
        last_used_at: null,
        prefix: pat.token.slice(0, TOKEN_SHOWN_PREFIX),
      },
    ]);

    expect((await api.get('/users/me', { token: pat.token })).status).toBe(200);
    expect((await api.get('/publishers/tok-pub/tokens', { token: alice.token })).body[0].last_used_at).toEqual(
      expect.any(String),
    );

    expect((await api.delete(`/publishers/tok-pub/tokens/${pat.id}`, { token: alice.token })).status).toBe(204);
    expectError(await api.get('/users/me', { token: pat.token }), 401, 'unauthorized');
    expect((await api.get('/publishers/tok-pub/tokens', { token: alice.token })).body).toEqual([]);
    expectError(await api.delete(`/publishers/tok-pub/tokens/${pat.id}`, { token: alice.token }), 404, 'not_found');
  });

  it('is 403 for members, PATs and strangers; 404 for an unknown publisher or a token of another publisher', async () => {
    await createPublisher(server, alice, 'tok-pub2');
    await addMember(server, alice, 'tok-pub2', bob);
    const pat = await createPat(server, alice, 'tok-pub2');
    const stranger = await createUser(server);
    for (const token of [bob.token, pat, stranger.token]) {
      expectError(await api.get('/publishers/tok-pub2/tokens', { token }), 403, 'forbidden');
      expectError(await api.post('/publishers/tok-pub2/tokens', { token, body: { name: 'x' } }), 403, 'forbidden');
    }
    expectError(await api.get('/publishers/no-such-pub/tokens', { token: alice.token }), 404, 'not_found');
    const other = CreatedToken.parse(
      (await api.post('/publishers/tok-pub/tokens', { token: alice.token, body: { name: 'o' } })).body,
    );
    expectError(await api.delete(`/publishers/tok-pub2/tokens/${other.id}`, { token: alice.token }), 404, 'not_found');
    // Found from outside: anyone with a token told a publisher's token ids from others by 404 against 403.
    const own = CreatedToken.parse(
      (await api.post('/publishers/tok-pub2/tokens', { token: alice.token, body: { name: 'p' } })).body,
    );
    for (const token of [bob.token, pat, stranger.token]) {
      for (const id of [own.id, other.id, 'no-such-token'])
        expectError(await api.delete(`/publishers/tok-pub2/tokens/${id}`, { token }), 403, 'forbidden');
    }
    // the admin may manage any publisher's tokens
    expect((await api.get('/publishers/tok-pub2/tokens', { token: server.adminToken })).status).toBe(200);
  });
});

describe('members', () => {
  it('invites members (201 Invitation), who join by accepting; changes roles at once; removes them (204)', async () => {
    await createPublisher(server, alice, 'team');
    const invited = await api.post('/publishers/team/members', { token: alice.token, body: { user_id: bob.id } });
    expect(invited.status).toBe(201);
    expect(Invitation.parse(invited.body)).toMatchObject({
      role: 'member',
      status: 'pending',
      user: { id: bob.id, name: 'bob' },
    });
    expect((await api.get('/users/me', { token: bob.token })).body.publishers).not.toContainEqual({
      id: 'team',
      role: 'member',
    });
    expect((await api.post('/users/me/invitations/team/accept', { token: bob.token })).status).toBe(200);
    expect((await api.get('/users/me', { token: bob.token })).body.publishers).toContainEqual({
      id: 'team',
      role: 'member',
    });

    // a member may not manage members
    const carol = await createUser(server);
    expectError(
      await api.post('/publishers/team/members', { token: bob.token, body: { user_id: carol.id } }),
      403,
      'forbidden',
    );

    const promoted = await api.post('/publishers/team/members', {
      token: alice.token,
      body: { user_id: bob.id, role: 'owner' },
    });
    expect(promoted.body).toMatchObject({ role: 'owner', status: 'member' });
    // now bob, an owner, may remove alice
    expect((await api.delete(`/publishers/team/members/${alice.id}`, { token: bob.token })).status).toBe(204);
    const members = (await api.get('/publishers/team')).body.members;
    expect(members.map((m: { user: { id: string } }) => m.user.id)).toEqual([bob.id]);
  });

  it('refuses to remove or demote the last owner (409)', async () => {
    await createPublisher(server, alice, 'solo');
    expectError(await api.delete(`/publishers/solo/members/${alice.id}`, { token: alice.token }), 409, 'conflict');
    expectError(
      await api.post('/publishers/solo/members', { token: alice.token, body: { user_id: alice.id, role: 'member' } }),
      409,
      'conflict',
    );
    expect((await api.get('/publishers/solo')).body.members[0].role).toBe('owner');
  });

  it('is 404 for an unknown user, publisher or member; 400 for a bad role', async () => {
    await createPublisher(server, alice, 'members-404');
    expectError(
      await api.post('/publishers/members-404/members', { token: alice.token, body: { user_id: 'nobody' } }),
      404,
      'not_found',
    );
    expectError(
      await api.post('/publishers/nope-pub/members', { token: alice.token, body: { user_id: bob.id } }),
      404,
      'not_found',
    );
    expectError(
      await api.delete(`/publishers/members-404/members/${bob.id}`, { token: alice.token }),
      404,
      'not_found',
    );
    expectError(await api.post('/users/me/invitations/members-404/accept', { token: bob.token }), 404, 'not_found');
    expectError(
      await api.post('/publishers/members-404/members', {
        token: alice.token,
        body: { user_id: bob.id, role: 'boss' },
      }),
      400,
      'invalid_request',
    );
  });
});

// Found from outside: a user made 20,000 tokens in 27 s (nothing stopped more), and their list then
// answered 4.8 MB in ~200 ms of the server's event loop.
describe(`at most ${TOKENS_MAX} live tokens`, () => {
  it('of a user and of a publisher: one more is 409 with a hint, and a revoked one makes room', async () => {
    const carol = await createUser(server); // with its first token
    await createPublisher(server, carol, 'many-tokens');
    for (const [path, live] of [
      ['/users/me/tokens', 1],
      ['/publishers/many-tokens/tokens', 0],
    ] as const) {
      const made = await Promise.all(
        Array.from({ length: TOKENS_MAX - live }, (_, i) =>
          api.post(path, { token: carol.token, body: { name: `t${i}` } }),
        ),
      );
      for (const reply of made) expect(reply.status, reply.text).toBe(201);
      const refused = await api.post(path, { token: carol.token, body: { name: 'one more' } });
      expectError(refused, 409, 'conflict');
      expect(refused.body.hint).toMatch(/revoke/);
      expect((await api.delete(`${path}/${made[0].body.id}`, { token: carol.token })).status).toBe(204);
      expect((await api.post(path, { token: carol.token, body: { name: 'in its place' } })).status).toBe(201);
      expect((await api.get(path, { token: carol.token })).body).toHaveLength(TOKENS_MAX);
    }
  });
});
