// --rate-limit N/min: mutating requests per user (all its tokens share one allowance), else per
// address (no token, or a made-up one); 429 rate_limited with Retry-After; reads are free.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../../helpers.js';
import { randomBytes } from 'node:crypto';
import { client, createPat, createPublisher, createUser, expectError, type TestUser } from '../fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  server = await startServer({ rateLimit: 3 });
  api = client(server);
  // the admin spends two of its three changes here
  alice = await createUser(server, 'alice');
  bob = await createUser(server, 'bob');
});
afterAll(() => server.close());

describe('rate limit', () => {
  it('answers the change past the limit with 429 and Retry-After, per token, and per user, and never limits reads', async () => {
    for (let i = 1; i <= 3; i++)
      expect((await api.post('/users/me/tokens', { token: alice.token, body: { name: `t${i}` } })).status).toBe(201);
    const limited = await api.post('/users/me/tokens', { token: alice.token, body: { name: 't4' } });
    expectError(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(20);
    // another user has its own budget
    expect((await api.post('/users/me/tokens', { token: bob.token, body: { name: 'b' } })).status).toBe(201);
    for (let i = 0; i < 10; i++) expect((await api.get('/users/me/tokens', { token: alice.token })).status).toBe(200);
  });
});

describe('rate limit that minting tokens or making them up does not dodge', () => {
  it('counts every token of one user, user tokens and PATs alike, against one allowance', async () => {
    const limited = await startServer({ rateLimit: 6 });
    const dave = await createUser(limited, 'dave'); // the admin's changes: 1
    const api = client(limited);
    await createPublisher(limited, dave, 'dave-pub'); // dave: 1
    const pat = await createPat(limited, dave, 'dave-pub'); // 2
    const second = (await api.post('/users/me/tokens', { token: dave.token, body: { name: 'second' } })).body.token; // 3
    for (const token of [second, pat]) {
      expect((await api.put('/publishers/dave-pub/nodes/none', { token, body: {} })).status).toBe(404); // 4, 5
    }
    expect((await api.post('/users/me/tokens', { token: second, body: { name: 'x' } })).status).toBe(201); // 6
    for (const token of [dave.token, second, pat]) {
      expectError(await api.put('/publishers/dave-pub/nodes/none', { token, body: {} }), 429, 'rate_limited');
    }
    await limited.close();
  });

  it('counts requests without a token, and with unknown tokens, by address', async () => {
    const limited = await startServer({ rateLimit: 4 });
    const api = client(limited);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await api.post('/publishers', { body: { id: 'x' } })).status);
    for (let i = 0; i < 3; i++) {
      statuses.push(
        (await api.post('/publishers', { token: `nrg_u_${randomBytes(16).toString('hex')}`, body: { id: 'x' } }))
          .status,
      );
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
    // a real user from the same address has its own allowance
    const erin = await createUser(limited, 'erin');
    expect((await api.post('/users/me/tokens', { token: erin.token, body: { name: 'e' } })).status).toBe(201);
    await limited.close();
  });
});

describe('no rate limit by default', () => {
  it('lets many changes through when --rate-limit is not set', async () => {
    const open = await startServer();
    const carol = await createUser(open, 'carol');
    for (let i = 0; i < 10; i++)
      expect(
        (await client(open).post('/users/me/tokens', { token: carol.token, body: { name: `t${i}` } })).status,
      ).toBe(201);
    await open.close();
  });
});
