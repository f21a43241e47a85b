// Migration 'search-words': nodes stored before it get the split words of their id and name when the
// store opens (SQLite) or migrates (PostgreSQL), so an upgraded registry finds them as a new one does.
import { describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { openDatabase } from '../../src/server/store/db.js';
import { createPostgresRegistryStore, migratePostgres } from '../../src/server/store/postgres-registry-store.js';
import type { RegistryStore } from '../../src/server/store/registry-store.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { testPostgres } from '../postgres.js';
import { databaseBefore } from './old-schema.js';

const ids = async (store: RegistryStore, q: string) =>
  (await store.searchNodes({ terms: q.split(' '), offset: 0, limit: 10 })).rows.map((node) => node.id);

async function expectFound(store: RegistryStore) {
  expect(await ids(store, 'video helper')).toEqual(['comfyui-videohelpersuite']);
  expect(await ids(store, 'SDUpscale')).toEqual(['comfyui_ultimatesdupscale']);
  expect(await ids(store, 'gone')).toEqual([]); // Deleted: still out of the index
}

// one server for the file: its afterAll stops it after the last test
const postgresServer = testPostgres();

describe('migration search-words', () => {
  it('splits the ids and names of the nodes a database holds, and indexes them (SQLite)', async () => {
    const { file, db: old, now } = databaseBefore('search-words', ['acme']);
    const add = old.prepare(
      `INSERT INTO nodes (id, publisher_id, name, status, created_at, updated_at) VALUES (?, 'acme', ?, ?, ?, ?)`,
    );
    add.run('comfyui-videohelpersuite', 'ComfyUI-VideoHelperSuite', 'NodeStatusActive', now, now);
    add.run('comfyui_ultimatesdupscale', 'ComfyUI_UltimateSDUpscale', 'NodeStatusActive', now, now);
    add.run('GoneNode', null, 'NodeStatusDeleted', now, now);
    expect(await ids(createSqliteRegistryStore(old), 'video helper')).toEqual([]);
    old.close();
    const db = openDatabase(file);
    expect(db.prepare('SELECT id, words FROM nodes ORDER BY seq').all()).toEqual([
      { id: 'comfyui-videohelpersuite', words: 'helpersuite suite' },
      { id: 'comfyui_ultimatesdupscale', words: 'sdupscale upscale' },
      { id: 'GoneNode', words: 'node' },
    ]);
    await expectFound(createSqliteRegistryStore(db));
    // one written without its words by an older nodereg on the same file: filled when the store opens again
    db.prepare(
      `INSERT INTO nodes (id, publisher_id, name, created_at, updated_at) VALUES ('LateNode', 'acme', 'Late VideoTools', ?, ?)`,
    ).run(now, now);
    db.close();
    const reopened = openDatabase(file);
    expect(reopened.prepare("SELECT words FROM nodes WHERE id = 'LateNode'").get()).toEqual({ words: 'node tools' });
    expect(await ids(createSqliteRegistryStore(reopened), 'tools')).toEqual(['LateNode']);
    reopened.close();
  });

  it.runIf(postgresServer)('fills the words a store left empty (PostgreSQL)', async () => {
    const sql = postgres(await (await postgresServer)!.database(), { max: 2, onnotice: () => {} });
    try {
      await migratePostgres(sql);
      const now = new Date().toISOString();
      await sql`INSERT INTO publishers (id, created_at) VALUES ('acme', ${now})`;
      for (const [id, name, status] of [
        ['comfyui-videohelpersuite', 'ComfyUI-VideoHelperSuite', 'NodeStatusActive'],
        ['comfyui_ultimatesdupscale', 'ComfyUI_UltimateSDUpscale', 'NodeStatusActive'],
        ['GoneNode', null, 'NodeStatusDeleted'],
      ]) {
        await sql`INSERT INTO nodes (id, publisher_id, name, status, created_at, updated_at) VALUES (${id}, 'acme', ${name}, ${status}, ${now}, ${now})`;
      }
      const store = createPostgresRegistryStore(sql);
      expect(await ids(store, 'video helper')).toEqual([]);
      await migratePostgres(sql);
      expect(await sql`SELECT id, words FROM nodes ORDER BY seq`).toEqual([
        { id: 'comfyui-videohelpersuite', words: 'helpersuite suite' },
        { id: 'comfyui_ultimatesdupscale', words: 'sdupscale upscale' },
        { id: 'GoneNode', words: 'node' },
      ]);
      await expectFound(store);
    } finally {
      await sql.end();
    }
  });
});

// Migration 'search-words-host-name': the words written before it split the host's name (ComfyUI: ui),
// so `ui` found nearly every node; they are written again, and the full-text indexes with them.
describe('migration search-words-host-name', () => {
  it('writes the words again without `ui` for ComfyUI, and indexes them (SQLite)', async () => {
    const { file, db: old, now } = databaseBefore('search-words-host-name', ['acme']);
    const add = old.prepare(
      `INSERT INTO nodes (id, publisher_id, name, status, created_at, updated_at, words) VALUES (?, 'acme', ?, 'NodeStatusActive', ?, ?, ?)`,
    );
    add.run('comfyui-videohelpersuite', 'ComfyUI-VideoHelperSuite', now, now, 'ui helpersuite suite');
    add.run('comfyui-nodeui', 'ComfyUI-NodeUI', now, now, 'ui');
    expect((await ids(createSqliteRegistryStore(old), 'ui')).sort()).toEqual([
      'comfyui-nodeui',
      'comfyui-videohelpersuite',
    ]);
    old.close();
    const db = openDatabase(file);
    expect(db.prepare('SELECT id, words FROM nodes ORDER BY seq').all()).toEqual([
      { id: 'comfyui-videohelpersuite', words: 'helpersuite suite' },
      { id: 'comfyui-nodeui', words: 'ui' },
    ]);
    const store = createSqliteRegistryStore(db);
    expect(await ids(store, 'ui')).toEqual(['comfyui-nodeui']);
    expect(await ids(store, 'video helper')).toEqual(['comfyui-videohelpersuite']);
    db.close();
  });

  it.runIf(postgresServer)('writes the words again without `ui` for ComfyUI (PostgreSQL)', async () => {
    const sql = postgres(await (await postgresServer)!.database(), { max: 2, onnotice: () => {} });
    try {
      await migratePostgres(sql);
      const now = new Date().toISOString();
      await sql`INSERT INTO publishers (id, created_at) VALUES ('acme', ${now})`;
      for (const [id, name, words] of [
        ['comfyui-videohelpersuite', 'ComfyUI-VideoHelperSuite', 'ui helpersuite suite'],
        ['comfyui-nodeui', 'ComfyUI-NodeUI', 'ui'],
      ]) {
        await sql`INSERT INTO nodes (id, publisher_id, name, status, created_at, updated_at, words) VALUES (${id}, 'acme', ${name}, 'NodeStatusActive', ${now}, ${now}, ${words})`;
      }
      // as they were before the migration: its row in schema_migrations, and those after it, taken out, so that it runs again
      await sql`DELETE FROM schema_migrations WHERE version >= (SELECT version FROM schema_migrations WHERE name = 'search-words-host-name')`;
      const store = createPostgresRegistryStore(sql);
      expect((await ids(store, 'ui')).sort()).toEqual(['comfyui-nodeui', 'comfyui-videohelpersuite']);
      await migratePostgres(sql);
      expect(await sql`SELECT id, words FROM nodes ORDER BY seq`).toEqual([
        { id: 'comfyui-videohelpersuite', words: 'helpersuite suite' },
        { id: 'comfyui-nodeui', words: 'ui' },
      ]);
      expect(await ids(store, 'ui')).toEqual(['comfyui-nodeui']);
    } finally {
      await sql.end();
    }
  });
});
