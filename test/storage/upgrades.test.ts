// A data dir an older nodereg wrote is brought up to date: serve's log says so (from which schema to
// which, and that an older nodereg refuses it from now on; an up-to-date one says nothing), and each
// migration leaves the rows as a new registry would have them:
// - 'version-order': versions stored before it get their sort key when the store opens, so an upgraded
//   registry lists and picks latest_version as a new one does (on PostgreSQL with the migrations);
// - 'listed-count': a registry upgraded with nodes in it starts with the count of the nodes its lists
//   show (Active, publisher not banned), as one that counted them from the first node would;
// - 'node-metadata': node metadata that nothing searches or sorts is one JSON document; its fields come
//   from the contract, unset ones are left out, and it holds nothing the contract does not allow.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { describe, expect, it, onTestFinished } from 'vitest';
import { NODE_COLUMN_FIELDS, NODE_METADATA_FIELDS } from '../../src/contract/resources.js';
import { openDatabase } from '../../src/server/store/db.js';
import { migrations } from '../../src/server/store/migrations.js';
import { createPostgresRegistryStore, migratePostgres } from '../../src/server/store/postgres-registry-store.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { versionOrder } from '../../src/server/store/version-order.js';
import { startServer, tempDir, EMPTY_PENDING_FIELDS } from '../helpers.js';
import { testPostgres } from '../postgres.js';
import { databaseBefore } from './old-schema.js';

const VERSIONS = ['1.10.0', '1.9.0', '2.0.0-rc.1', '1.2.0'];

describe('migration version-order', () => {
  it('gives every version stored before it its sort key (SQLite)', async () => {
    const { file, db: old, now } = databaseBefore('version-order', ['acme']);
    old
      .prepare(`INSERT INTO nodes (id, publisher_id, created_at, updated_at) VALUES ('old', 'acme', ?, ?)`)
      .run(now, now);
    for (const version of VERSIONS) {
      old
        .prepare(
          `INSERT INTO versions (id, node_id, version, status, created_at) VALUES (?, 'old', ?, 'NodeVersionStatusActive', ?)`,
        )
        .run(version, version, now);
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
    db.prepare(
      `INSERT INTO versions (id, node_id, version, status, created_at) VALUES ('9', 'old', '9.0.0', 'NodeVersionStatusActive', ?)`,
    ).run(now);
    expect((await store.listVersions('old')).map((v) => v.version)).toEqual([
      '2.0.0-rc.1',
      '1.10.0',
      '1.9.0',
      '1.2.0',
      '9.0.0',
    ]);
    expect((await store.latestVersions(['old']))[0].version).toBe('1.10.0');
    db.close();
  });

  const postgresServer = testPostgres();
  it.runIf(postgresServer)(
    'fills the sort keys a store left empty, and orders at once a version an older build inserts during a rolling upgrade (PostgreSQL)',
    async () => {
      const sql = postgres(await (await postgresServer)!.database(), { max: 2, onnotice: () => {} });
      try {
        await migratePostgres(sql);
        const now = new Date().toISOString();
        await sql`INSERT INTO publishers (id, created_at) VALUES ('acme', ${now})`;
        await sql`INSERT INTO nodes (id, publisher_id, created_at, updated_at) VALUES ('old', 'acme', ${now}, ${now})`;
        for (const version of VERSIONS) {
          await sql`INSERT INTO versions (id, node_id, version, status, created_at) VALUES (${version}, 'old', ${version}, 'NodeVersionStatusActive', ${now})`;
        }
        await migratePostgres(sql);
        const store = createPostgresRegistryStore(sql);
        expect((await store.listVersions('old')).map((v) => v.version)).toEqual([
          '2.0.0-rc.1',
          '1.10.0',
          '1.9.0',
          '1.2.0',
        ]);
        expect((await store.latestVersions(['old']))[0].version).toBe('1.10.0');
        // one stored without its key by an older nodereg sharing the database (a rolling upgrade): ordered at once
        // by the trigger of migration 'version-order-trigger', so every instance answers the same latest_version
        await sql`INSERT INTO versions (id, node_id, version, status, created_at) VALUES ('9', 'old', '9.0.0', 'NodeVersionStatusActive', ${now})`;
        expect((await store.listVersions('old')).map((v) => v.version)).toEqual([
          '9.0.0',
          '2.0.0-rc.1',
          '1.10.0',
          '1.9.0',
          '1.2.0',
        ]);
        expect((await store.latestVersions(['old']))[0].version).toBe('9.0.0');
        // the trigger's key is versionOrder's
        const versions = [
          '0.0.0',
          '1.2.3',
          '10.20.30',
          '1.0.0-alpha',
          '1.0.0-alpha.1',
          '1.0.0-0.3.7',
          '1.0.0-x.7.z.92',
          '1.0.0-rc.10',
          '999999999999999.0.1-beta.11',
          '1.0.0-',
          'not-a-version',
        ];
        const [row] = await sql<
          { keys: string[] }[]
        >`SELECT array_agg(version_order_of(v) ORDER BY n) AS keys FROM unnest(${sql.array(versions)}::text[]) WITH ORDINALITY AS t(v, n)`;
        expect(row.keys).toEqual(versions.map(versionOrder));
      } finally {
        await sql.end();
      }
    },
  );
});

describe('migration listed-count', () => {
  it('counts the listed nodes stored before it (SQLite)', async () => {
    const { file, db: old, now } = databaseBefore('listed-count', ['acme', 'banned']);
    const statuses = ['NodeStatusActive', 'NodeStatusActive', 'NodeStatusDeleted', 'NodeStatusBanned'];
    for (const publisher of ['acme', 'banned']) {
      for (const [i, status] of statuses.entries()) {
        old
          .prepare('INSERT INTO nodes (id, publisher_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
          .run(`${publisher}-${i}`, publisher, status, now, now);
      }
    }
    old.prepare("UPDATE publishers SET status = 'PublisherStatusBanned' WHERE id = 'banned'").run();
    old.close();
    const db = openDatabase(file);
    onTestFinished(() => {
      db.close();
    });
    const store = createSqliteRegistryStore(db);
    const page = await store.listNodes({ sort: 'created_at', offset: 0, limit: 100 });
    expect(page.rows.map((node) => node.id).sort()).toEqual(['acme-0', 'acme-1']);
    expect(page.total).toBe(2);
    await store.updatePublisher('banned', { status: 'PublisherStatusActive' });
    expect((await store.listNodes({ sort: 'created_at', offset: 0, limit: 100 })).total).toBe(4);
  });
});

const columnsOf = (db: Database.Database, table: string) =>
  (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((column) => column.name);

describe('migration node-metadata', () => {
  it('moves every set field of the old columns into the document, leaves unset ones out and drops the columns', async () => {
    const { file, db: old, now } = databaseBefore('node-metadata', ['acme']);
    old
      .prepare(
        `INSERT INTO nodes (id, publisher_id, name, description, author, tags, banner_url, license, supported_os, tags_admin,
         translations, repohost_stars, status_detail, search_ranking, created_at, updated_at)
       VALUES ('full', 'acme', 'Full', 'all set', 'ann', '["a","b"]', 'https://b', 'MIT', '["linux"]', '["x"]',
         '{"fr":{"name":"Plein"}}', 7, 'fine', 3, ?, ?)`,
      )
      .run(now, now);
    old
      .prepare(`INSERT INTO nodes (id, publisher_id, created_at, updated_at) VALUES ('bare', 'acme', ?, ?)`)
      .run(now, now);
    old.close();

    const db = openDatabase(file);
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
    const nodeColumns = columnsOf(db, 'nodes');
    for (const field of NODE_METADATA_FIELDS) {
      expect(nodeColumns.includes(field), field).toBe((NODE_COLUMN_FIELDS as readonly string[]).includes(field));
    }
    const raw = db.prepare('SELECT id, metadata FROM nodes ORDER BY id').all() as { id: string; metadata: string }[];
    expect(raw.map((row) => [row.id, JSON.parse(row.metadata)])).toEqual([
      ['bare', {}],
      [
        'full',
        {
          banner_url: 'https://b',
          license: 'MIT',
          supported_os: ['linux'],
          tags_admin: ['x'],
          translations: { fr: { name: 'Plein' } },
          repohost_stars: 7,
          status_detail: 'fine',
        },
      ],
    ]);

    const store = createSqliteRegistryStore(db);
    const full = (await store.getNode('full'))!;
    expect(full).toMatchObject({
      name: 'Full',
      description: 'all set',
      author: 'ann',
      tags: ['a', 'b'],
      search_ranking: 3,
      banner_url: 'https://b',
      license: 'MIT',
      supported_os: ['linux'],
      tags_admin: ['x'],
      translations: { fr: { name: 'Plein' } },
      repohost_stars: 7,
      status_detail: 'fine',
      icon: null,
      category: null,
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
    await store.publish({
      publisherId: 'acme',
      nodeId: 'n',
      node: { icon: 'https://i', license: 'MIT' },
      version: '1.0.0',
      pending: EMPTY_PENDING_FIELDS,
    });
    const document = () =>
      JSON.parse((db.prepare("SELECT metadata FROM nodes WHERE id = 'n'").get() as { metadata: string }).metadata);
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

describe('the upgrade log', () => {
  it('logs the upgrade of an older registry.db once, naming the file and both schemas', async () => {
    const { file, db } = databaseBefore('generations', []);
    db.close();
    const dataDir = dirname(file);
    writeFileSync(join(dataDir, 'secret'), `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    const before = migrations.findIndex((migration) => migration.name === 'generations');
    for (const expected of [
      [
        `upgraded the database ${file} from schema ${before} to ${migrations.length}: an older nodereg refuses it from now on (keep a backup to go back)`,
      ],
      [],
    ]) {
      const lines: string[] = [];
      const server = await startServer({ dataDir, log: (line) => lines.push(line), accessLog: false });
      await server.close();
      expect(lines.filter((line) => line.startsWith('upgraded'))).toEqual(expected);
    }
  });
});
