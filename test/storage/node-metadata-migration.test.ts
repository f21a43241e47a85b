// Node metadata that nothing searches or sorts is one JSON document (migration 'node-metadata'):
// the fields come from the contract, unset ones are left out, and the document holds nothing the
// contract does not allow.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_COLUMN_FIELDS, NODE_METADATA_FIELDS } from '../../src/contract/resources.js';
import { openDatabase } from '../../src/server/store/db.js';
import { migrations } from '../../src/server/store/migrations.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { tempDir } from '../helpers.js';
import { databaseBefore } from './old-schema.js';

const PENDING = {
  changelog: null, dependencies: null, supported_accelerators: null, supported_appui_frontend_version: null,
  supported_appui_version: null, supported_os: null, tags: null,
};

const columnsOf = (db: Database.Database, table: string) =>
  (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((column) => column.name);

describe('migration node-metadata', () => {
  it('moves every set field of the old columns into the document, leaves unset ones out and drops the columns', async () => {
    const { file, db: old, stamp } = databaseBefore('node-metadata', ['acme']);
    old.prepare(
      `INSERT INTO nodes (id, publisher_id, name, description, author, tags, banner_url, license, supported_os, tags_admin,
         translations, repohost_stars, status_detail, search_ranking, created_at, updated_at)
       VALUES ('full', 'acme', 'Full', 'all set', 'ann', '["a","b"]', 'https://b', 'MIT', '["linux"]', '["x"]',
         '{"fr":{"name":"Plein"}}', 7, 'fine', 3, ?, ?)`,
    ).run(stamp, stamp);
    old.prepare(`INSERT INTO nodes (id, publisher_id, created_at, updated_at) VALUES ('bare', 'acme', ?, ?)`).run(stamp, stamp);
    old.close();

    const db = openDatabase(file);
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
    const nodeColumns = columnsOf(db, 'nodes');
    for (const field of NODE_METADATA_FIELDS) {
      expect(nodeColumns.includes(field), field).toBe((NODE_COLUMN_FIELDS as readonly string[]).includes(field));
    }
    const raw = db.prepare("SELECT id, metadata FROM nodes ORDER BY id").all() as { id: string; metadata: string }[];
    expect(raw.map((row) => [row.id, JSON.parse(row.metadata)])).toEqual([
      ['bare', {}],
      ['full', {
        banner_url: 'https://b', license: 'MIT', supported_os: ['linux'], tags_admin: ['x'],
        translations: { fr: { name: 'Plein' } }, repohost_stars: 7, status_detail: 'fine',
      }],
    ]);

    const store = createSqliteRegistryStore(db);
    const full = (await store.getNode('full'))!;
    expect(full).toMatchObject({
      name: 'Full', description: 'all set', author: 'ann', tags: ['a', 'b'], search_ranking: 3, banner_url: 'https://b',
      license: 'MIT', supported_os: ['linux'], tags_admin: ['x'], translations: { fr: { name: 'Plein' } }, repohost_stars: 7,
      status_detail: 'fine', icon: null, category: null,
    });
    for (const field of NODE_METADATA_FIELDS) expect(field in (await store.getNode('bare'))!, field).toBe(true);
  });
});

describe('the node metadata document', () => {
  const fresh = async () => {
    const db = openDatabase(join(tempDir(), 'registry.db'));
    const store = createSqliteRegistryStore(db);
    await store.createUser({ id: 'u', name: 'u' });
    await store.createPublisher('acme', {}, 'u');
    await store.publish({ publisherId: 'acme', nodeId: 'n', node: { icon: 'https://i', license: 'MIT' }, version: '1.0.0', pending: PENDING });
    const document = () => JSON.parse((db.prepare("SELECT metadata FROM nodes WHERE id = 'n'").get() as { metadata: string }).metadata);
    return { store, document };
  };

  it('changes only the fields given; null removes a field from the document', async () => {
    const { store, document } = await fresh();
    expect(document()).toEqual({ icon: 'https://i', license: 'MIT' });
    const updated = await store.updateNode('n', { icon: null, translations: { de: { name: 'N' } }, name: 'Named' });
    expect(document()).toEqual({ license: 'MIT', translations: { de: { name: 'N' } } });
    expect(updated).toMatchObject({ icon: null, license: 'MIT', name: 'Named', translations: { de: { name: 'N' } } });
  });

  it('refuses a value the contract does not allow, and keeps the document as it was', async () => {
    const { store, document } = await fresh();
    await expect(store.updateNode('n', { icon: 5 as unknown as string })).rejects.toThrow(/icon/);
    expect(document()).toEqual({ icon: 'https://i', license: 'MIT' });
  });
});
