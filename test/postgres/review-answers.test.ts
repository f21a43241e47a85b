// Reviews over HTTP on PostgreSQL, the server's connections through a proxy that counts what they send:
// once the node's answer is kept, a review is one round trip (the caller's role is not asked for apart,
// and the answer is the kept one with the new rating), and the instance that wrote shows the new rating
// at once. Under reviews sent at once the rating stays the mean of the rows, and a member's review is
// refused without a row.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { openDatabaseTarget } from '../../src/server/backends.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { testPostgres } from '../postgres.js';
import { eventually } from '../proxy/stand-ins.js';
import { call, createPublisher, createUser, expectError, publish, type TestUser } from '../server/fixtures.js';
import { type CountingProxy, countingProxy } from './counting-proxy.js';

const postgresServer = testPostgres();
const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A server on a new database through a counting proxy, node `rated` of acme (owner `owner`), and `reviewers` users. */
async function reviewedServer(reviewers: number): Promise<{
  server: TestServer;
  proxy: CountingProxy;
  sql: postgres.Sql;
  owner: TestUser;
  users: TestUser[];
  url: string;
}> {
  const url = await (await postgresServer!).migratedDatabase();
  const proxy = await countingProxy(url);
  closers.push(() => proxy.close());
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  closers.push(() => sql.end());
  const server = await startServer({
    adminToken: `nrg_u_admin${randomBytes(16).toString('hex')}`,
    database: await openDatabaseTarget({ kind: 'postgres', url: proxy.url }),
    archives: createLocalArchiveStorage(tempDir('nodereg-archives-')),
  });
  closers.push(() => server.close());
  const owner = await createUser(server, 'owner');
  await createPublisher(server, owner, 'acme');
  expect((await publish(server, owner.token, 'acme', 'rated', '1.0.0')).status).toBe(201);
  const users: TestUser[] = [];
  for (let i = 0; i < reviewers; i++) users.push(await createUser(server, `reviewer${i}`));
  return { server, proxy, sql, owner, users, url };
}

const review = (server: TestServer, user: TestUser, star: number) =>
  call(server.url, 'POST', `/nodes/rated/reviews?star=${star}`, { token: user.token });

describe.skipIf(!postgresServer)('reviews over HTTP on PostgreSQL', () => {
  it('a review is one round trip once the answer is kept, and the writer shows the new rating at once', async () => {
    const { server, proxy, users } = await reviewedServer(10);
    // a first review by each (their tokens are then known), and reads, prepare the statements, and the
    // server hears its beats
    const stars = new Map<TestUser, number>();
    for (const user of users) {
      expect((await review(server, user, 3)).status).toBe(200);
      stars.set(user, 3);
    }
    await eventually(async () => {
      const before = proxy.roundTrips();
      expect((await call(server.url, 'GET', '/nodes/rated')).status).toBe(200);
      return proxy.roundTrips() === before || undefined;
    }, 'the server to answer from memory');
    for (const [i, user] of users.entries()) {
      stars.set(user, (i % 4) + 1); // each a new star
      const mean = [...stars.values()].reduce((a, b) => a + b, 0) / stars.size;
      const before = proxy.roundTrips();
      const reviewed = await review(server, user, stars.get(user)!);
      expect(reviewed.status, reviewed.text).toBe(200);
      expect(proxy.roundTrips() - before, `round trips of review ${i}`).toBe(1);
      expect(reviewed.body.rating).toBeCloseTo(mean, 12);
      expect((await call(server.url, 'GET', '/nodes/rated')).body.rating).toBeCloseTo(mean, 12);
    }
  });

  it('keeps the rating the mean of the rows under reviews sent at once, and refuses a member without a row', async () => {
    const { server, sql, owner, users } = await reviewedServer(20);
    for (let round = 0; round < 3; round++) {
      const replies = await Promise.all(users.map((user, i) => review(server, user, ((i * 7 + round) % 5) + 1)));
      expect(replies.map((reply) => reply.status)).toEqual(users.map(() => 200));
    }
    const refused = await review(server, owner, 5);
    expectError(refused, 403, 'forbidden');
    const [rows] =
      await sql`SELECT avg(star)::float8 AS mean, count(*)::int AS count FROM reviews WHERE node_id = 'rated'`;
    expect(rows.count).toBe(users.length);
    expect((await call(server.url, 'GET', '/nodes/rated')).body.rating).toBeCloseTo(rows.mean, 12);
  });

  it('a review says its transaction changed the rating only when its change notice names it, also for a double submit', async () => {
    const { url, users } = await reviewedServer(1);
    const [reviewer] = users;
    const told = new Set<string>();
    const listener = postgres(url, { max: 1, onnotice: () => {} });
    closers.push(() => listener.end());
    await listener.listen('nodereg_changes', (payload) => {
      if (payload.startsWith('stamp ')) told.add(JSON.parse(payload.slice(6)).transaction);
    });
    const pool = postgres(url, { max: 8, onnotice: () => {} });
    closers.push(() => pool.end());
    const rate = (star: number) =>
      pool`SELECT changed_by FROM rate_node('rated', ${reviewer.id}, ${star}, ${new Date().toISOString()})`;
    // the same first review sent 8 times at once, then the same again, then another star
    const changers: string[] = [];
    for (const star of [4, 4, 2]) {
      const replies = await Promise.all(Array.from({ length: 8 }, () => rate(star)));
      for (const [row] of replies) if (row.changed_by !== null) changers.push(row.changed_by);
    }
    expect(changers.length, 'the first review and the change of star').toBeGreaterThanOrEqual(2);
    await eventually(() => changers.every((id) => told.has(id)) || undefined, 'a notice for each change');
  });
});
