// --rate-limit N/min: mutating requests per token, 429 rate_limited with Retry-After; reads are free.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import { client, createUser, expectError, type TestUser } from './fixtures.js';

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
  it('answers the change past the limit with 429 and Retry-After, per token, and never limits reads', async () => {
    for (let i = 1; i <= 3; i++) expect((await api.post('/users/me/tokens', { token: alice.token, body: { name: `t${i}` } })).status).toBe(201);
    const limited = await api.post('/users/me/tokens', { token: alice.token, body: { name: 't4' } });
    expectError(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(20);
    // another token has its own budget
    expect((await api.post('/users/me/tokens', { token: bob.token, body: { name: 'b' } })).status).toBe(201);
    for (let i = 0; i < 10; i++) expect((await api.get('/users/me/tokens', { token: alice.token })).status).toBe(200);
  });
});

describe('no rate limit by default', () => {
  it('lets many changes through when --rate-limit is not set', async () => {
    const open = await startServer();
    const carol = await createUser(open, 'carol');
    for (let i = 0; i < 10; i++) expect((await client(open).post('/users/me/tokens', { token: carol.token, body: { name: `t${i}` } })).status).toBe(201);
    await open.close();
  });
});
