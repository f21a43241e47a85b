// The search index of PostgreSQL is built concurrently, after the migration's transaction and outside
// its lock (src/server/store/postgres/migrate.ts): instances of the older version sharing the database
// keep answering searches while it is built.
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresRegistryStore, migratePostgres } from '../../src/server/store/postgres-registry-store.js';
import { postgresMigrations } from '../../src/server/store/postgres-migrations.js';
import { testPostgres } from '../postgres.js';

const postgresServer = testPostgres();
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

const connect = async (url: string) => {
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  closers.push(() => sql.end());
  return sql;
};

/** A database as the migrations before `name` left it, as migratePostgres records them, with two nodes. */
async function databaseBefore(url: string, name: string) {
  const sql = await connect(url);
  const before = postgresMigrations.findIndex((migration) => migration.name === name);
  expect(before).toBeGreaterThan(0);
  await sql`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)`;
  for (const [index, migration] of postgresMigrations.slice(0, before).entries()) {
    await sql.unsafe(migration.sql);
    await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${index + 1}, ${migration.name}, '2026-01-01')`;
  }
  const now = new Date().toISOString();
  await sql`INSERT INTO publishers (id, created_at) VALUES ('acme', ${now})`;
  await sql`INSERT INTO nodes (id, publisher_id, name, created_at, updated_at) VALUES
    ('video-tools', 'acme', 'Video Tools', ${now}, ${now}), ('ComfyUI-VideoHelperSuite', 'acme', 'ComfyUI-VideoHelperSuite', ${now}, ${now})`;
  return sql;
}

/** Whether an index is being built concurrently on nodes: polled until it is, or until `settled` is. */
async function untilIndexBuild(sql: postgres.Sql, settled: () => boolean): Promise<boolean> {
  for (;;) {
    const [build] = await sql`SELECT 1 FROM pg_stat_progress_create_index p JOIN pg_class c ON c.oid = p.relid
                              WHERE c.relname = 'nodes' AND p.command = 'CREATE INDEX CONCURRENTLY'`;
    if (build) return true;
    if (settled()) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.runIf(postgresServer)('the PostgreSQL search index', () => {
  it('is built outside the migration lock, while an older instance keeps answering searches', async () => {
    const url = await (await postgresServer)!.database();
    const older = await databaseBefore(url, 'search-words');
    // A transaction of another session, open with its snapshot: a concurrent index build waits for it
    // to end, and so shows itself; it locks no table, so it holds up nothing else.
    const holder = await connect(url);
    const reserved = await holder.reserve();
    await reserved`BEGIN ISOLATION LEVEL REPEATABLE READ`;
    await reserved`SELECT 1`;
    const migrating = await connect(url);
    let settled = false;
    const migration = migratePostgres(migrating).finally(() => (settled = true));
    try {
      expect(await untilIndexBuild(older, () => settled), 'the search index was built inside the migration').toBe(true);
      // the migration's lock is free, and the older instance's search (its own column) answers at once
      expect(
        await older`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 7411202`,
      ).toEqual([{ n: 0 }]);
      const answered = await older.begin(async (tx) => {
        await tx`SET LOCAL lock_timeout = '5s'`;
        return tx`SELECT id FROM nodes WHERE search @@ to_tsquery('simple', 'video:*') ORDER BY id`;
      });
      expect(answered.map((row) => row.id)).toEqual(['ComfyUI-VideoHelperSuite', 'video-tools']);
    } finally {
      await reserved`COMMIT`;
      reserved.release();
      await migration;
    }
    // built and valid, and the new store's search finds nodes by their split words through it
    expect(
      await older`SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'nodes_search_vector'`,
    ).toEqual([{ valid: true }]);
    const store = createPostgresRegistryStore(migrating);
    expect((await store.searchNodes({ terms: ['helper'], offset: 0, limit: 10 })).rows.map((node) => node.id)).toEqual([
      'ComfyUI-VideoHelperSuite',
    ]);
  }, 60_000);

  it('is built again when a build that stopped left it invalid', async () => {
    const sql = await connect(await (await postgresServer)!.database());
    await migratePostgres(sql);
    // as a build whose instance died leaves it
    await sql`UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'nodes_search_vector'::regclass`;
    await migratePostgres(sql);
    expect(
      await sql`SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'nodes_search_vector'`,
    ).toEqual([{ valid: true }]);
  }, 60_000);
});
