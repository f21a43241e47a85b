// Migration 'version-order': versions stored before it get their sort key when the store opens, so
// an upgraded registry lists and picks latest_version as a new one does. On PostgreSQL the fill runs
// with the migrations (migratePostgres).
import { describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { openDatabase } from '../../src/server/store/db.js';
import { createPostgresRegistryStore, migratePostgres } from '../../src/server/store/postgres-registry-store.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { versionOrder } from '../../src/server/store/version-order.js';
import { testPostgres } from '../postgres.js';
import { databaseBefore } from './old-schema.js';

const VERSIONS = ['1.10.0', '1.9.0', '2.0.0-rc.1', '1.2.0'];

describe('migration version-order', () => {
  it('gives every version stored before it its sort key (SQLite)', async () => {
    const { file, db: old, stamp } = databaseBefore('version-order', ['acme']);
    old.prepare(`INSERT INTO nodes (id, publisher_id, created_at, updated_at) VALUES ('old', 'acme', ?, ?)`).run(stamp, stamp);
    for (const version of VERSIONS) {
      old.prepare(`INSERT INTO versions (id, node_id, version, status, created_at) VALUES (?, 'old', ?, 'NodeVersionStatusActive', ?)`).run(version, version, stamp);
    }
    old.close();
    const db = openDatabase(file);
    expect(db.prepare('SELECT version, version_order FROM versions ORDER BY version').all()).toEqual(
      [...VERSIONS].sort().map((version) => ({ version, version_order: versionOrder(version) })),
    );
    const store = createSqliteRegistryStore(db);
    expect((await store.listVersions('old')).map((v) => v.version)).toEqual(['2.0.0-rc.1', '1.10.0', '1.9.0', '1.2.0']);
    expect((await store.latestVersions(['old']))[0].version).toBe('1.10.0');
    // one stored without its key by an older nodereg on the same database: last, and not the latest, until filled
    db.prepare(`INSERT INTO versions (id, node_id, version, status, created_at) VALUES ('9', 'old', '9.0.0', 'NodeVersionStatusActive', ?)`).run(stamp);
    expect((await store.listVersions('old')).map((v) => v.version)).toEqual(['2.0.0-rc.1', '1.10.0', '1.9.0', '1.2.0', '9.0.0']);
    expect((await store.latestVersions(['old']))[0].version).toBe('1.10.0');
    db.close();
  });

  const postgresServer = testPostgres();
  it.runIf(postgresServer)('fills the sort keys a store left empty (PostgreSQL)', async () => {
    const sql = postgres(await (await postgresServer)!.database(), { max: 2, onnotice: () => {} });
    try {
      await migratePostgres(sql);
      const stamp = new Date().toISOString();
      await sql`INSERT INTO publishers (id, created_at) VALUES ('acme', ${stamp})`;
      await sql`INSERT INTO nodes (id, publisher_id, created_at, updated_at) VALUES ('old', 'acme', ${stamp}, ${stamp})`;
      for (const version of VERSIONS) {
        await sql`INSERT INTO versions (id, node_id, version, status, created_at) VALUES (${version}, 'old', ${version}, 'NodeVersionStatusActive', ${stamp})`;
      }
      await migratePostgres(sql);
      const store = createPostgresRegistryStore(sql);
      expect((await store.listVersions('old')).map((v) => v.version)).toEqual(['2.0.0-rc.1', '1.10.0', '1.9.0', '1.2.0']);
      expect((await store.latestVersions(['old']))[0].version).toBe('1.10.0');
      // one stored without its key by an older nodereg: last, and not the latest, as on SQLite
      await sql`INSERT INTO versions (id, node_id, version, status, created_at) VALUES ('9', 'old', '9.0.0', 'NodeVersionStatusActive', ${stamp})`;
      expect((await store.listVersions('old')).map((v) => v.version)).toEqual(['2.0.0-rc.1', '1.10.0', '1.9.0', '1.2.0', '9.0.0']);
      expect((await store.latestVersions(['old']))[0].version).toBe('1.10.0');
    } finally {
      await sql.end();
    }
  });
});
