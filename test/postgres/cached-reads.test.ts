// Two instances on one PostgreSQL database, B's connections through a proxy that counts what they send:
// B answers a node it has answered before without a query while nothing changed, sees what A writes
// (announced by LISTEN/NOTIFY), and, when its connections are cut, still sees A's writes.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { openDatabaseTarget } from '../../src/server/backends.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { testPostgres } from '../postgres.js';
import { eventually } from '../proxy/stand-ins.js';
import { call, createPublisher, createUser, publish, type TestUser } from '../server/fixtures.js';
import { type CountingProxy, countingProxy } from './counting-proxy.js';

const postgresServer = testPostgres();
const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A and B on one new database (B through a counting proxy), node `watched` published, and a reviewer. */
async function twoInstances(): Promise<{ a: TestServer; b: TestServer; proxy: CountingProxy; reviewer: TestUser }> {
  const url = await (await postgresServer!).migratedDatabase();
  const proxy = await countingProxy(url);
  closers.push(() => proxy.close());
  const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
  const archives = tempDir('nodereg-archives-');
  const start = async (database: string) => {
    const server = await startServer({
      adminToken,
      database: await openDatabaseTarget({ kind: 'postgres', url: database }),
      archives: createLocalArchiveStorage(archives),
    });
    closers.push(() => server.close());
    return server;
  };
  const a = await start(url);
  const b = await start(proxy.url);
  const owner = await createUser(a, 'owner');
  await createPublisher(a, owner, 'acme');
  expect((await publish(a, owner.token, 'acme', 'watched', '1.0.0')).status).toBe(201);
  return { a, b, proxy, reviewer: await createUser(a, 'reviewer') };
}

/** B's rating of `watched`, once B shows `rating`. */
const seenOnB = (b: TestServer, rating: number) =>
  eventually(
    async () => ((await call(b.url, 'GET', '/nodes/watched')).body?.rating === rating ? true : undefined),
    `B to show rating ${rating}`,
    30_000,
  );

describe.skipIf(!postgresServer)('cached reads on PostgreSQL, two instances', () => {
  it('B answers GET /nodes/{id} without a query while nothing changes, and sees a review written on A', async () => {
    const { a, b, proxy, reviewer } = await twoInstances();
    // once B hears its beats, a read of a node it has read before asks nothing
    await eventually(async () => {
      const before = proxy.statements();
      expect((await call(b.url, 'GET', '/nodes/watched')).status).toBe(200);
      return proxy.statements() === before || undefined;
    }, 'B to answer from memory');
    const before = proxy.statements();
    const reads = 100;
    for (let i = 0; i < reads; i++) expect((await call(b.url, 'GET', '/nodes/watched')).status).toBe(200);
    expect(proxy.statements() - before).toBe(0);

    const reviewed = await call(a.url, 'POST', '/nodes/watched/reviews?star=4', { token: reviewer.token });
    expect(reviewed.status, reviewed.text).toBe(200);
    await seenOnB(b, 4);
  });

  it('after its connections are cut, B still sees what A writes (no answer kept from before the cut)', async () => {
    const { a, b, proxy, reviewer } = await twoInstances();
    await eventually(async () => {
      const before = proxy.statements();
      await call(b.url, 'GET', '/nodes/watched');
      return proxy.statements() === before || undefined;
    }, 'B to answer from memory');
    const watchers = proxy.watchers();
    proxy.cut();
    const reviewed = await call(a.url, 'POST', '/nodes/watched/reviews?star=2', { token: reviewer.token });
    expect(reviewed.status, reviewed.text).toBe(200);
    await seenOnB(b, 2);
    // and B listens again: a later review is heard too
    await eventually(() => (proxy.watchers() > watchers ? true : undefined), 'B to listen again');
    expect((await call(a.url, 'POST', '/nodes/watched/reviews?star=5', { token: reviewer.token })).status).toBe(200);
    await seenOnB(b, 5);
  });
});
