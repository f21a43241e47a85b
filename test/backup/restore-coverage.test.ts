// What `nodereg restore` copies is derived from the catalogs, never listed: these tests hold the two
// stores' migrations to the same tables and columns (so a migration that adds a table or a column to
// one store only fails here), hold SEEDED_TABLES to what the migrations insert, and show that a
// column restore could not carry stops it before anything is written.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { openDatabase } from '../../src/server/store/db.js';
import { connectPostgres, migratePostgres } from '../../src/server/store/postgres-registry-store.js';
import {
  catalogDifferences,
  postgresTables,
  POSTGRES_OWN_TABLES,
  restore,
  SEEDED_TABLES,
  sqliteTables,
} from '../../src/server/restore.js';
import { tempDir } from '../helpers.js';
import { testPostgres } from '../postgres.js';

const postgresServer = testPostgres();

/** A data dir with a migrated, empty registry.db and a secret; `change` alters its schema first. */
function sourceDir(change?: string): string {
  const dir = tempDir('nodereg-source-');
  const db = openDatabase(join(dir, 'registry.db'));
  db.prepare(
    "INSERT INTO users (id, name, admin, created_at) VALUES ('u1', 'ada', 0, '2026-01-01T00:00:00.000Z')",
  ).run();
  if (change) db.exec(change);
  db.close();
  writeFileSync(join(dir, 'secret'), 'ab'.repeat(32));
  return dir;
}

const restoreInto = (source: string, databaseUrl: string) =>
  restore({
    source,
    database: { kind: 'postgres', url: databaseUrl },
    storage: async () => createLocalArchiveStorage(join(tempDir(), 'archives')),
    say: () => {},
  });

async function withPostgres<T>(url: string, use: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await use(sql);
  } finally {
    await sql.end();
  }
}

describe('the tables restore carries', () => {
  it('a migrated SQLite registry: every table restore copies has rows of its own (no full-text shadow tables), parents first', () => {
    const db = openDatabase(join(tempDir(), 'registry.db'));
    const names = sqliteTables(db).map((t) => t.name);
    db.close();
    expect(names).toContain('nodes');
    expect(names.some((name) => name.includes('fts'))).toBe(false);
    expect(names.indexOf('publishers')).toBeLessThan(names.indexOf('nodes'));
    expect(names.indexOf('nodes')).toBeLessThan(names.indexOf('versions'));
    expect(names.indexOf('versions')).toBeLessThan(names.indexOf('archive_claims'));
  });

  it.skipIf(!postgresServer)(
    'are the same tables and columns on SQLite and PostgreSQL after their migrations',
    async () => {
      const sqlite = openDatabase(join(tempDir(), 'registry.db'));
      const url = await (await postgresServer!).database();
      await withPostgres(url, async (sql) => {
        await migratePostgres(sql);
        expect(catalogDifferences(sqliteTables(sqlite), (await postgresTables(sql)).tables)).toEqual([]);
        // PostgreSQL's own tables are the two restore knows: its migration history and the secret.
        const all = (
          await sql`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
        ).map((r) => r.table_name as string);
        expect(all.filter((name) => !sqliteTables(sqlite).some((t) => t.name === name)).sort()).toEqual(
          [...POSTGRES_OWN_TABLES].sort(),
        );
        // The tables the migrations fill, on both stores, are SEEDED_TABLES.
        const filled: string[] = [];
        for (const { name } of (await postgresTables(sql)).tables)
          if ((await sql`SELECT 1 FROM ${sql(name)} LIMIT 1`).length) filled.push(name);
        expect(filled).toEqual(SEEDED_TABLES);
      });
      expect(
        sqliteTables(sqlite)
          .filter((t) => sqlite.prepare(`SELECT 1 FROM "${t.name}" LIMIT 1`).get())
          .map((t) => t.name),
      ).toEqual(SEEDED_TABLES);
      sqlite.close();
    },
  );

  it.skipIf(!postgresServer)(
    'a column the target lacks, or a table only the target has, stops the restore before it writes a row',
    async () => {
      const url = await (await postgresServer!).database();
      await expect(restoreInto(sourceDir('ALTER TABLE users ADD COLUMN nickname TEXT'), url)).rejects.toThrow(
        /users\.nickname \(only in the source\)/,
      );
      await withPostgres(url, async (sql) => {
        expect((await sql`SELECT count(*)::int AS n FROM users`)[0].n).toBe(0);
        await sql`CREATE TABLE badges (id text PRIMARY KEY)`;
      });
      await expect(restoreInto(sourceDir(), url)).rejects.toThrow(/badges \(only in the target\)/);
      await withPostgres(url, async (sql) => {
        await sql`DROP TABLE badges`;
      });
      // With the two alike again, the same source goes in, replacing the secret `serve --migrate-only` made.
      await (await connectPostgres(url)).close();
      const report = await restoreInto(sourceDir(), url);
      expect(report.tables.users).toBe(1);
      await withPostgres(url, async (sql) =>
        expect((await sql`SELECT secret FROM server_secret`)[0].secret).toBe('ab'.repeat(32)),
      );
    },
  );

  it.skipIf(!postgresServer)(
    'a row PostgreSQL refuses, after others went in, rolls every row back: the target stays empty',
    async () => {
      const url = await (await postgresServer!).database();
      // jsonb has no \u0000, which SQLite's JSON text may hold: the versions go in after the users, publishers and nodes.
      const source = sourceDir(`
      INSERT INTO publishers (id, created_at) VALUES ('p', '2026-01-01');
      INSERT INTO nodes (id, publisher_id, created_at, updated_at) VALUES ('n', 'p', '2026-01-01', '2026-01-01');
      INSERT INTO versions (id, node_id, version, created_at, findings) VALUES ('v', 'n', '1.0.0', '2026-01-01', '["\\u0000"]');`);
      await expect(restoreInto(source, url)).rejects.toThrow(/unsupported Unicode escape sequence|\\u0000/);
      await withPostgres(url, async (sql) => {
        for (const table of ['users', 'publishers', 'nodes', 'versions'])
          expect((await sql`SELECT count(*)::int AS n FROM ${sql(table)}`)[0].n, table).toBe(0);
      });
    },
  );
});
