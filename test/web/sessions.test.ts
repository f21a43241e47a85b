// Signing in with a pasted token: an HttpOnly, SameSite=Strict session cookie that never holds the
// token; sessions end by signing out, by expiry and with their token; and every form that changes
// something is refused without the page's CSRF token or from another origin, changing nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import { client, createPat, createPublisher, createUser, type TestUser } from '../server/fixtures.js';
import { webClient } from './web-client.js';

let server: TestServer;
let alice: TestUser;

beforeAll(async () => {
  server = await startServer();
  alice = await createUser(server, 'alice');
});
afterAll(() => server.close());

const signedInAs = async (web: ReturnType<typeof webClient>) =>
  /Signed in as <bdi>([^<]*)<\/bdi>/.exec((await web.get('/')).text)?.[1];

describe('sign-in', () => {
  it('sets an HttpOnly SameSite=Strict cookie holding a session id, never the token', async () => {
    const web = webClient(server);
    const reply = await web.signIn(alice.token);
    expect(reply.headers.get('location')).toBe('/');
    const cookie = reply.headers.getSetCookie().find((line) => line.startsWith('nodereg_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/); // plain http here; https registries get Secure
    expect(cookie).not.toContain(alice.token);
    const home = await web.get('/');
    expect(home.text).not.toContain(alice.token);
    expect(await signedInAs(web)).toBe('alice');
  });

  it('refuses an unknown token and a publisher PAT, with no session', async () => {
    await createPublisher(server, alice, 'alicepub');
    const pat = await createPat(server, alice, 'alicepub');
    for (const token of ['nrg_u_nottoken', pat]) {
      const web = webClient(server);
      const reply = await web.post('/web/sign-in', { token, csrf: await web.csrf('/web/sign-in') });
      expect(reply.status).toBe(401);
      expect(reply.text).toContain('not a live user token');
      // `token create` alone needs the token one lacks: the hint names who makes the first one
      expect(reply.text).toContain('the registry&#39;s admin makes a user&#39;s first one with `nodereg user create`');
      expect(reply.text).not.toContain('create one with `nodereg token create`');
      expect(web.cookies.has('nodereg_session')).toBe(false);
    }
  });

  it('signing out ends the session on the server: the old cookie no longer signs in', async () => {
    const web = webClient(server);
    await web.signIn(alice.token);
    const stolen = web.cookies.get('nodereg_session')!;
    const out = await web.post('/web/sign-out', { csrf: await web.csrf('/') });
    expect(out.status).toBe(303);
    expect(await signedInAs(web)).toBeUndefined();
    const replay = webClient(server);
    replay.cookies.set('nodereg_session', stolen);
    expect(await signedInAs(replay)).toBeUndefined();
  });

  it('a session ends when it expires and when its token is revoked', async () => {
    const expired = webClient(server);
    expired.cookies.set('nodereg_session', 'expired-session-id');
    const { createHash } = await import('node:crypto');
    await server.server.store.createSession(createHash('sha256').update('expired-session-id').digest('hex'), {
      user_id: alice.id,
      token_id: (await server.server.store.listTokens({ userId: alice.id }))[0]!.id,
      csrf: 'x',
      expires_at: new Date(Date.now() - 1000).toISOString(),
    });
    expect(await signedInAs(expired)).toBeUndefined();

    const bob = await createUser(server, 'bob');
    const web = webClient(server);
    await web.signIn(bob.token);
    expect(await signedInAs(web)).toBe('bob');
    const tokens = await client(server).get('/users/me/tokens', { token: bob.token });
    const revoked = await client(server).delete(
      `/users/me/tokens/${tokens.body[0]?.id ?? tokens.body.tokens?.[0]?.id}`,
      {
        token: bob.token,
      },
    );
    expect(revoked.status, revoked.text).toBeLessThan(300);
    expect(await signedInAs(web)).toBeUndefined();
  });
});

describe('CSRF', () => {
  it('a form post without the token, with another session’s token, or from another origin is refused and changes nothing', async () => {
    const web = webClient(server);
    await web.signIn(alice.token);
    const csrf = await web.csrf('/');
    const other = webClient(server);
    await other.signIn(alice.token);
    const othersCsrf = await other.csrf('/');
    const refused = [
      await web.post('/web/sign-out', {}),
      await web.post('/web/sign-out', { csrf: othersCsrf }),
      await web.post('/web/sign-out', { csrf }, 'https://evil.example'),
      await web.post('/web/sign-out', { csrf }, null),
      await web.post('/web/sign-out', { csrf }, 'null'),
    ];
    for (const reply of refused) {
      expect(reply.status).toBe(403);
      expect(reply.headers.get('content-type')).toMatch(/text\/html/);
    }
    expect(await signedInAs(web)).toBe('alice');
    // a sign-in form needs its own token too (no login CSRF)
    const fresh = webClient(server);
    expect((await fresh.post('/web/sign-in', { token: alice.token })).status).toBe(403);
    expect(fresh.cookies.has('nodereg_session')).toBe(false);
  });

  it('a form body over the limit is refused', async () => {
    const web = webClient(server);
    const reply = await web.post('/web/sign-in', { token: 'x'.repeat(20_000), csrf: await web.csrf('/web/sign-in') });
    expect(reply.status).toBe(413);
  });
});
