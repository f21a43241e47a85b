// Each start fills the rows an older nodereg left without a version_order or words (db.ts,
// migratePostgres). Once they are filled, a start must cost nothing: the fill's statements read an
// index of the unfilled rows alone (migration 'unfilled-rows-indexes'), never the whole table, on
// SQLite and PostgreSQL; and a row an older nodereg leaves unfilled later is still filled.
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/server/store/db.js';
import { migratePostgres } from '../../src/server/store/postgres-registry-store.js';
import { UNFILLED_WORDS } from '../../src/server/store/search-words.js';
import { UNFILLED_VERSION_ORDER } from '../../src/server/store/version-order.js';
import { join } from 'node:path';
import { tempDir } from '../helpers.js';
import { testPostgres } from '../postgres.js';

const FILLS = [
  [UNFILLED_WORDS, 'nodes', 'nodes_unfilled_words'],
  [UNFILLED_VERSION_ORDER, 'versions', 'versions_unfilled_order'],
] as const;

describe('the rows filled at each start', () => {
  it('are read through their own index on SQLite, and one an older nodereg writes later is filled', () => {
    const file = join(tempDir(), 'registry.db');
    const db = openDatabase(file);
    const now = new Date().toISOString();
    db.prepare("INSERT INTO users (id, name, created_at) VALUES ('u', 'u', ?)").run(now);
    db.prepare("INSERT INTO publishers (id, created_at) VALUES ('acme', ?)").run(now);
    const node = db.prepare(
      "INSERT INTO nodes (id, publisher_id, name, created_at, updated_at, words) VALUES (?, 'acme', ?, ?, ?, ?)",
    );
    const version = db.prepare(
      "INSERT INTO versions (id, node_id, version, created_at, version_order) VALUES (?, ?, '1.0.0', ?, ?)",
    );
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) {
        node.run(`node-${i}`, `Node ${i}`, now, now, 'filled');
        version.run(`v-${i}`, `node-${i}`, now, 'filled');
      }
    })();
    db.exec('ANALYZE');
    for (const [statement, table, index] of FILLS) {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${statement}`).all() as { detail: string }[]).map(
        (step) => step.detail,
      );
      expect(plan, statement).toEqual([`SCAN ${table} USING INDEX ${index}`]);
    }
    // as an older nodereg writes them: without words or version_order
    db.prepare(
      "INSERT INTO nodes (id, publisher_id, name, created_at, updated_at) VALUES ('LateNode', 'acme', 'Late VideoTools', ?, ?)",
    ).run(now, now);
    db.prepare("INSERT INTO versions (id, node_id, version, created_at) VALUES ('late', 'LateNode', '2.0.0', ?)").run(
      now,
    );
    db.close();
    const reopened = openDatabase(file);
    expect(reopened.prepare("SELECT words FROM nodes WHERE id = 'LateNode'").get()).toEqual({ words: 'node tools' });
    expect(reopened.prepare("SELECT version_order FROM versions WHERE id = 'late'").get()).toEqual({
      version_order: expect.stringMatching(/^0+2/),
    });
    for (const [statement] of FILLS) expect(reopened.prepare(statement).all()).toEqual([]);
    reopened.close();
  });

  const postgresServer = testPostgres();
  it.runIf(postgresServer)(
    'are read through their own index on PostgreSQL, and one an older nodereg writes later is filled',
    async () => {
      const sql = postgres(await (await postgresServer)!.database(), { max: 1, onnotice: () => {} });
      try {
        await migratePostgres(sql);
        const now = new Date().toISOString();
        await sql`INSERT INTO publishers (id, created_at) VALUES ('acme', ${now})`;
        await sql`INSERT INTO nodes (id, publisher_id, name, created_at, updated_at, words)
        SELECT 'node-' || i, 'acme', 'Node ' || i, ${now}, ${now}, 'filled' FROM generate_series(1, 2000) AS i`;
        await sql`INSERT INTO versions (id, node_id, version, created_at, version_order)
        SELECT 'v-' || i, 'node-' || i, '1.0.0', ${now}, 'filled' FROM generate_series(1, 2000) AS i`;
        await sql`ANALYZE nodes`;
        await sql`ANALYZE versions`;
        for (const [statement, table, index] of FILLS) {
          const [
            {
              'QUERY PLAN': [{ Plan: plan }],
            },
          ] = await sql.unsafe(`EXPLAIN (FORMAT JSON) ${statement}`);
          // an index scan, or a bitmap scan whose one child is the index
          const step = plan['Node Type'] === 'Bitmap Heap Scan' ? plan.Plans[0] : plan;
          expect({ node: step['Node Type'], index: step['Index Name'] }, `${statement} on ${table}`).toEqual({
            node: expect.stringMatching(/^(Index|Index Only|Bitmap Index) Scan$/),
            index,
          });
        }
        await sql`INSERT INTO nodes (id, publisher_id, name, created_at, updated_at) VALUES ('LateNode', 'acme', 'Late VideoTools', ${now}, ${now})`;
        await sql`INSERT INTO versions (id, node_id, version, created_at) VALUES ('late', 'LateNode', '2.0.0', ${now})`;
        await migratePostgres(sql);
        expect(await sql`SELECT words FROM nodes WHERE id = 'LateNode'`).toEqual([{ words: 'node tools' }]);
        expect((await sql`SELECT version_order FROM versions WHERE id = 'late'`)[0].version_order).toMatch(/^0+2/);
        for (const [statement] of FILLS) expect(await sql.unsafe(statement)).toEqual([]);
      } finally {
        await sql.end();
      }
    },
  );
});
