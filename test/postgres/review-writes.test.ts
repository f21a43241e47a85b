// Reviews on PostgreSQL: one statement each (one round trip, one commit: no transaction block), counted
// on the wire by a proxy; and the node's running sum and count stay those of its rows under reviews
// sent at once.
import fc from 'fast-check';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresRegistryStore } from '../../src/server/store/postgres-registry-store.js';
import type { RegistryStore } from '../../src/server/store/registry-store.js';
import { testPostgres } from '../postgres.js';
import { countingProxy } from './counting-proxy.js';
import { EMPTY_PENDING_FIELDS } from '../helpers.js';

const postgresServer = testPostgres();

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A store on a fresh migrated database (through `url` when given), with users r0…r{users-1} and node `rated`. */
async function reviewedStore(users: number, url?: (direct: string) => Promise<string>) {
  const direct = await (await postgresServer!).migratedDatabase();
  const sql = postgres(url ? await url(direct) : direct, { max: url ? 1 : 10, onnotice: () => {} });
  closers.push(() => sql.end());
  const store = createPostgresRegistryStore(sql);
  await store.createUser({ id: 'owner', name: 'owner' });
  await store.createPublisher('acme', {}, 'owner');
  for (let i = 0; i < users; i++) await store.createUser({ id: `r${i}`, name: `r${i}` });
  return { store, sql };
}

async function publishNode(store: RegistryStore, nodeId: string) {
  await store.publish({ publisherId: 'acme', nodeId, node: {}, version: '1.0.0', pending: EMPTY_PENDING_FIELDS });
}

describe.skipIf(!postgresServer)('reviews on PostgreSQL', () => {
  it('a review is one statement in one round trip, outside any transaction block', async () => {
    let proxy: Awaited<ReturnType<typeof countingProxy>> | undefined;
    const { store } = await reviewedStore(21, async (direct) => {
      proxy = await countingProxy(direct);
      closers.push(() => proxy!.close());
      return proxy.url;
    });
    await publishNode(store, 'rated');
    await store.review('rated', 'r20', 3); // prepares the statement
    const [statements, roundTrips, texts] = [proxy!.statements(), proxy!.roundTrips(), proxy!.texts().length];
    const reviews = 20;
    for (let i = 0; i < reviews; i++) await store.review('rated', `r${i}`, (i % 5) + 1);
    expect(proxy!.statements() - statements).toBe(reviews);
    expect(proxy!.roundTrips() - roundTrips).toBe(reviews);
    expect(
      proxy!
        .texts()
        .slice(texts)
        .filter((text) => /\b(begin|commit)\b/i.test(text)),
    ).toEqual([]);
    expect((await store.getNode('rated'))!.rating).toBeCloseTo((3 + 4 * 15) / 21, 12);
  });

  it('keeps the running sum and count equal to the rows under random reviews sent at once', async () => {
    const { store, sql } = await reviewedStore(8);
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 1, max: 5 })), {
          minLength: 1,
          maxLength: 40,
        }),
        async (reviews) => {
          const nodeId = `race-${round++}`;
          await publishNode(store, nodeId);
          await Promise.all(reviews.map(([user, star]) => store.review(nodeId, `r${user}`, star)));
          const [node] =
            await sql`SELECT rating, rating_sum::int AS sum, rating_count::int AS count FROM nodes WHERE id = ${nodeId}`;
          const [rows] =
            await sql`SELECT coalesce(sum(star), 0)::int AS sum, count(*)::int AS count, coalesce(avg(star), 0)::float8 AS mean FROM reviews WHERE node_id = ${nodeId}`;
          expect({ sum: node.sum, count: node.count }).toEqual({ sum: rows.sum, count: rows.count });
          expect(node.rating).toBeCloseTo(rows.mean, 12);
        },
      ),
      { numRuns: 15, seed: 3601 },
    );
  });
});
