// Lists and search show Active nodes of active publishers only: the nodes of a banned publisher leave
// /nodes and /nodes/search when it is banned, and come back when the ban is lifted.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/server/store/db.js';
import { migrations } from '../../../src/server/store/migrations.js';
import { createSqliteRegistryStore } from '../../../src/server/store/sqlite-registry-store.js';
import { startServer, tempDir, type TestServer } from '../../helpers.js';
import {
  addMember,
  client,
  createPublisher,
  createUser,
  expectError,
  publish,
  publishAndUpload,
  type TestUser,
} from '../fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: TestUser;

const ids = (reply: { body: { nodes: { id: string }[]; total: number } }) => ({
  ids: reply.body.nodes.map((node) => node.id).sort(),
  total: reply.body.total,
});
const setStatus = (publisherId: string, status: string) =>
  api.put(`/publishers/${publisherId}`, { token: server.adminToken, body: { status } });

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  owner = await createUser(server, 'ban-owner');
  await createPublisher(server, owner, 'shady');
  await createPublisher(server, owner, 'decent');
  for (const [publisher, node] of [
    ['shady', 'glow-a'],
    ['shady', 'glow-b'],
    ['decent', 'glow-c'],
  ]) {
    expect(
      (
        await publish(server, owner.token, publisher, node, '1.0.0', {
          node: { name: `Glow ${node}`, description: 'glowing lights' },
        })
      ).status,
    ).toBe(201);
  }
});
afterAll(() => server.close());

describe('nodes of a banned publisher', () => {
  it('leave the lists and search when it is banned, and come back when the ban is lifted', async () => {
    const all = { ids: ['glow-a', 'glow-b', 'glow-c'], total: 3 };
    expect(ids(await api.get('/nodes'))).toEqual(all);
    expect(ids(await api.get('/nodes/search?q=glowing'))).toEqual(all);

    expect((await setStatus('shady', 'PublisherStatusBanned')).status).toBe(200);
    const decentOnly = { ids: ['glow-c'], total: 1 };
    for (const sort of ['created_at', 'downloads', 'rating', 'name', 'search_ranking']) {
      expect(ids(await api.get(`/nodes?sort=${sort}`)), sort).toEqual(decentOnly);
    }
    expect(ids(await api.get('/nodes/search?q=glowing'))).toEqual(decentOnly);
    expect(ids(await api.get('/nodes/search?q=glow-a'))).toEqual({ ids: [], total: 0 });
    expect(ids(await api.get('/nodes/search?q='))).toEqual(decentOnly);
    // an admin edits a node of the banned publisher: it stays out of search
    expect(
      (
        await api.put('/publishers/shady/nodes/glow-a', {
          token: server.adminToken,
          body: { description: 'glowing brighter' },
        })
      ).status,
    ).toBe(200);
    expect(ids(await api.get('/nodes/search?q=brighter'))).toEqual({ ids: [], total: 0 });

    expect((await setStatus('shady', 'PublisherStatusActive')).status).toBe(200);
    expect(ids(await api.get('/nodes'))).toEqual(all);
    expect(ids(await api.get('/nodes/search?q=glowing'))).toEqual(all);
    expect(ids(await api.get('/nodes/search?q=brighter'))).toEqual({ ids: ['glow-a'], total: 1 });

    // A second ban and lift keep the full-text index sound (an FTS5 delete of a row not indexed corrupts it).
    await setStatus('shady', 'PublisherStatusBanned');
    await setStatus('shady', 'PublisherStatusActive');
    server.server.db!.prepare("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')").run();
    expect(ids(await api.get('/nodes/search?q=glowing'))).toEqual(all);
  });

  it('stay out of a search with more matches than are ranked (the title index is searched first)', async () => {
    await setStatus('shady', 'PublisherStatusBanned');
    const store = createSqliteRegistryStore(server.server.db!, { rankLimit: 0 }); // every search takes the title path
    for (const terms of [['glow'], ['glowing'], ['lights']]) {
      const found = await store.searchNodes({ terms, offset: 0, limit: 10 });
      expect({ ids: found.rows.map((row) => row.id), total: found.total }, terms.join(' ')).toEqual({
        ids: ['glow-c'],
        total: 1,
      });
    }
    await setStatus('shady', 'PublisherStatusActive');
    const all = await store.searchNodes({ terms: ['glow'], offset: 0, limit: 10 });
    expect(all.rows.map((row) => row.id).sort()).toEqual(['glow-a', 'glow-b', 'glow-c']);
    server.server.db!.prepare("INSERT INTO nodes_title_fts(nodes_title_fts) VALUES ('integrity-check')").run();
  });

  it('a Deleted node of an unbanned publisher stays out', async () => {
    await api.put('/publishers/decent/nodes/glow-c', { token: owner.token, body: { status: 'NodeStatusDeleted' } });
    await setStatus('decent', 'PublisherStatusBanned');
    await setStatus('decent', 'PublisherStatusActive');
    expect(ids(await api.get('/nodes/search?q=glowing'))).toEqual({ ids: ['glow-a', 'glow-b'], total: 2 });
    server.server.db!.prepare("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')").run();
  });

  it('the migration takes nodes of publishers banned before it out of the search index', async () => {
    const file = `${tempDir()}/registry.db`;
    const old = new Database(file);
    old.exec(migrations[0].sql);
    old.pragma('user_version = 1');
    const now = new Date().toISOString();
    old
      .prepare(
        "INSERT INTO publishers (id, status, created_at) VALUES ('gone', 'PublisherStatusBanned', ?), ('here', 'PublisherStatusActive', ?)",
      )
      .run(now, now);
    old
      .prepare(
        "INSERT INTO nodes (id, publisher_id, name, created_at, updated_at) VALUES ('lamp-x', 'gone', 'lamp', ?, ?), ('lamp-y', 'here', 'lamp', ?, ?)",
      )
      .run(now, now, now, now);
    old.close();

    const db = openDatabase(file);
    const store = createSqliteRegistryStore(db);
    const found = await store.searchNodes({ terms: ['lamp'], offset: 0, limit: 10 });
    expect({ ids: found.rows.map((row) => row.id), total: found.total }).toEqual({ ids: ['lamp-y'], total: 1 });
    db.prepare("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')").run();
    db.close();
  });
});

describe('every read of a node of a banned publisher', () => {
  it('answers 403 `banned` to anyone but an admin: the node, its versions, install and the archive', async () => {
    await createPublisher(server, owner, 'outlaw');
    const member = await createUser(server, 'outlaw-member');
    await addMember(server, owner, 'outlaw', member);
    await publishAndUpload(server, owner.token, 'outlaw', 'dark-lamp', '1.0.0');
    const reads = [
      '/nodes/dark-lamp',
      '/nodes/DARK-LAMP',
      '/nodes/dark-lamp/versions',
      '/nodes/dark-lamp/versions/1.0.0',
      '/nodes/dark-lamp/install',
      '/nodes/dark-lamp/install?version=1.0.0',
      '/archives/outlaw/dark-lamp/1.0.0/node.zip',
      '/publishers/outlaw/nodes',
    ];
    for (const path of reads) expect((await api.get(path)).status, path).toBe(200);

    expect((await setStatus('outlaw', 'PublisherStatusBanned')).status).toBe(200);
    for (const path of reads) {
      for (const token of [undefined, owner.token, member.token]) {
        const reply = await api.get(path, { token });
        expectError(reply, 403, 'banned');
        expect(reply.body.message, path).toContain('outlaw');
      }
      const admin = await api.get(path, { token: server.adminToken });
      expect(admin.status, `${path} (admin)`).toBe(200);
    }
    expectError(await api.post('/nodes/dark-lamp/reviews?star=1', { token: member.token }), 403, 'banned');
    // the publisher itself still shows, with its status
    expect((await api.get('/publishers/outlaw')).body.status).toBe('PublisherStatusBanned');

    expect((await setStatus('outlaw', 'PublisherStatusActive')).status).toBe(200);
    for (const path of reads) expect((await api.get(path)).status, path).toBe(200);
  });
});
