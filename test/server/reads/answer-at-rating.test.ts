// A kept node answer at another rating is joined from the text around the rating's value, not
// serialised again: it must be the bytes JSON.stringify writes for the node at that rating.
import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Node } from '../../../src/contract/resources.js';
import { createNodeAnswers, ratingJoin } from '../../../src/server/node-answers.js';
import { createTaskStore } from '../../../src/server/proxy/store.js';
import { openDatabase } from '../../../src/server/store/db.js';
import { createSqliteRegistryStore } from '../../../src/server/store/sqlite-registry-store.js';
import { startServer, tempDir } from '../../helpers.js';
import { createPublisher, createUser, publishAndUpload } from '../fixtures.js';

const value = fc.oneof(
  fc.string(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
);
// fields before and after the rating, any of them left out by JSON.stringify (undefined), with
// names and strings that spell `"rating":` too
const tricky = fc.constantFrom('rating', '"rating":', ',"rating":1', 'ratings', '');
const fields = fc.array(fc.tuple(fc.oneof(fc.string(), tricky), fc.oneof(value, tricky)), { maxLength: 6 });
const rating = fc.oneof(fc.double(), fc.integer({ min: 0, max: 5 }), fc.constant(Number.NaN), fc.constant(undefined));

describe('a node answer at another rating', () => {
  it('is the bytes JSON.stringify writes for the node at that rating, wherever the rating stands', () => {
    fc.assert(
      fc.property(fields, fields, rating, rating, (before, after, first, next) => {
        const others = (list: typeof before) => list.filter(([name]) => name !== 'rating');
        const entries = [...others(before), ['rating', first], ...others(after)];
        const view = Object.fromEntries(entries) as unknown as Node;
        const join = ratingJoin(view);
        expect(join(first)).toBe(JSON.stringify(view));
        expect(join(next)).toBe(JSON.stringify({ ...view, rating: next }));
      }),
      { numRuns: 500, seed: 31 },
    );
  });

  it('is serialised whole for a view without a rating', () => {
    const view = { id: 'x' } as unknown as Node;
    expect(ratingJoin(view)(4)).toBe('{"id":"x","rating":4}');
  });
});

describe('a kept node answer', () => {
  it('holds its text once until its rating changes; then its body is the node at the new rating', async () => {
    const dir = tempDir('nodereg-data-');
    const db = openDatabase(join(dir, 'registry.db'));
    const store = createSqliteRegistryStore(db);
    const server = await startServer({
      dataDir: dir,
      database: { store, tasks: createTaskStore(db), close: () => void db.close() },
    });
    try {
      const owner = await createUser(server);
      await createPublisher(server, owner, 'kept-pub');
      await publishAndUpload(server, owner.token, 'kept-pub', 'kept-node', '1.0.0');
      const answers = createNodeAnswers(store, () => server.url);
      const node = (await store.getNode('kept-node'))!;
      const first = await answers.answer(node);
      expect(first.body).toBe(JSON.stringify(first.view));
      expect(first.atRating, 'no second copy of the text before a change of rating').toBeUndefined();
      const rated = answers.cached({ ...node, rating: node.rating + 1 })!;
      expect(rated.body).toBe(JSON.stringify({ ...first.view, rating: node.rating + 1 }));
      expect(rated.etag).not.toBe(first.etag);
      expect(rated.atRating).toBeDefined();
    } finally {
      await server.close();
    }
  });
});
