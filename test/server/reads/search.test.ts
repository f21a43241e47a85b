// Search when a term matches more nodes than are ranked (docs/decisions.md, search at 100,000 nodes):
// nodes with every term in their id, name or tags first, ranked; then the other matches, newest
// first. Tested on the store with a small rank limit, so a few nodes make a "common" term.
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../../src/server/store/db.js';
import { migrations } from '../../../src/server/store/migrations.js';
import type { NodeFields, RegistryStore } from '../../../src/server/store/registry-store.js';
import { createSqliteRegistryStore, DEFAULT_RANK_LIMIT } from '../../../src/server/store/sqlite-registry-store.js';
import { tempDir, EMPTY_PENDING_FIELDS } from '../../helpers.js';
import { databaseBefore } from '../../storage/old-schema.js';

let db: Db;
let store: RegistryStore;

async function addNodes(target: RegistryStore, nodes: [string, Partial<NodeFields>][]) {
  for (const [nodeId, node] of nodes) {
    const outcome = await target.publish({
      publisherId: 'acme',
      nodeId,
      node,
      version: '1.0.0',
      pending: EMPTY_PENDING_FIELDS,
    });
    expect(outcome.kind).toBe('created');
  }
}

const search = async (q: string, offset = 0, limit = 100) => {
  const found = await store.searchNodes({ terms: q.split(' '), offset, limit });
  return { ids: found.rows.map((node) => node.id), total: found.total };
};

// Published in this order (newest last). "video" is in all eight; in the id, name or tags of four,
// the best of which by bm25 (the node called "video") is the oldest.
const NODES: [string, Partial<NodeFields>][] = [
  ['video', { description: 'the video node' }],
  ['video-tools', { description: 'cuts video' }],
  ['old-cutter', { description: 'a video cutter' }],
  ['framer', { name: 'Video framer', description: 'frames' }],
  ['mixer', { description: 'mixes video and audio' }],
  ['tagged', { description: 'video filters', tags: ['video'] }],
  ['plain', { description: 'plain video node' }],
  ['newest', { description: 'newest video thing' }],
];

beforeEach(async () => {
  db = openDatabase(join(tempDir(), 'registry.db'));
  store = createSqliteRegistryStore(db, { rankLimit: 4 });
  await store.createUser({ id: 'u', name: 'u' });
  await store.createPublisher('acme', {}, 'u');
  await addNodes(store, NODES);
});

describe('search with more matches than are ranked', () => {
  it('puts id, name and tag matches first, ranked (the id itself first), then the others newest first', async () => {
    const found = await search('video');
    expect(found.total).toBe(8);
    expect(found.ids.slice(0, 4).sort()).toEqual(['framer', 'tagged', 'video', 'video-tools']);
    expect(found.ids[0]).toBe('video');
    expect(found.ids.slice(4)).toEqual(['newest', 'plain', 'mixer', 'old-cutter']);
  });

  it('orders the first group newest first too when it is itself larger than the rank limit', async () => {
    await addNodes(store, [['video-extra', { description: 'more' }]]);
    const found = await search('video');
    expect(found.total).toBe(9);
    expect(found.ids).toEqual([
      'video-extra',
      'tagged',
      'framer',
      'video-tools',
      'video',
      'newest',
      'plain',
      'mixer',
      'old-cutter',
    ]);
  });

  it('pages across the two groups without losing or repeating a node', async () => {
    const all = (await search('video')).ids;
    for (const limit of [1, 2, 3, 5]) {
      const paged: string[] = [];
      for (let offset = 0; offset < 10; offset += limit) {
        const page = await search('video', offset, limit);
        expect(page.total).toBe(8);
        paged.push(...page.ids);
      }
      expect(paged).toEqual(all);
    }
  });

  it('needs every term in the id, name or tags for the first group', async () => {
    // "framer" has video in its name but "frames" only in its description
    const found = await search('video fram');
    expect(found.ids).toEqual(['framer']);
    await addNodes(store, [
      ['frame-video', { description: 'x' }],
      ['clip', { name: 'Frame grabber', description: 'grabs video' }],
      ['last', { description: 'video frame tool' }],
      ['more', { description: 'video framing' }],
    ]);
    const many = await search('video fram');
    expect(many.total).toBe(5);
    expect(many.ids.slice(0, 2).sort()).toEqual(['frame-video', 'framer']);
    expect(many.ids.slice(2)).toEqual(['more', 'last', 'clip']);
  });

  it('follows renames, status changes and new tags', async () => {
    await store.updateNode('plain', { name: 'Video plain' });
    await store.updateNode('video', { status: 'NodeStatusDeleted' });
    await store.updateNode('tagged', { tags: ['filters'] });
    const found = await search('video');
    expect(found.total).toBe(7);
    expect(found.ids.slice(0, 3).sort()).toEqual(['framer', 'plain', 'video-tools']);
    expect(found.ids.slice(3)).toEqual(['newest', 'tagged', 'mixer', 'old-cutter']);
  });

  it('never puts a node of a banned publisher in the first group, and puts it back when unbanned', async () => {
    await store.createPublisher('other', {}, 'u');
    const outcome = await store.publish({
      publisherId: 'other',
      nodeId: 'video-banned',
      node: { description: 'x' },
      version: '1.0.0',
      pending: EMPTY_PENDING_FIELDS,
    });
    expect(outcome.kind).toBe('created');
    const firstFive = async () => (await search('video')).ids.slice(0, 5).sort();
    const titled = ['framer', 'tagged', 'video', 'video-tools'];
    expect(await firstFive()).toEqual([...titled, 'video-banned'].sort());
    await store.updatePublisher('other', { status: 'PublisherStatusBanned' });
    expect((await search('video')).ids.slice(0, 4).sort()).toEqual(titled);
    await store.updatePublisher('other', { status: 'PublisherStatusActive' });
    expect(await firstFive()).toEqual([...titled, 'video-banned'].sort());
  });

  it('ranks every match by bm25, as before, while they are no more than the rank limit', async () => {
    const ranked = createSqliteRegistryStore(db, { rankLimit: DEFAULT_RANK_LIMIT });
    const found = await ranked.searchNodes({ terms: ['video'], offset: 0, limit: 100 });
    const byRank = db
      .prepare(
        `SELECT n.id FROM nodes_fts JOIN nodes n ON n.seq = nodes_fts.rowid WHERE nodes_fts MATCH '"video"*' ORDER BY rank, nodes_fts.rowid`,
      )
      .pluck()
      .all();
    expect(found.total).toBe(8);
    expect(found.rows.map((node) => node.id)).toEqual(byRank);
    expect(byRank).not.toEqual((await search('video')).ids);
  });
});

describe('migration search-titles (the title index)', () => {
  it('indexes the Active nodes a database of the migrations before it already holds', async () => {
    const { file, db: v1, now } = databaseBefore('search-titles', ['acme', 'banned']);
    const addNode = v1.prepare(
      `INSERT INTO nodes (id, publisher_id, name, description, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, '${now}', '${now}')`,
    );
    addNode.run('video-one', 'acme', null, 'x', 'NodeStatusActive');
    addNode.run('other', 'acme', null, 'video', 'NodeStatusActive');
    addNode.run('gone', 'acme', 'video gone', null, 'NodeStatusDeleted');
    addNode.run('video-banned', 'banned', null, null, 'NodeStatusActive');
    v1.exec("UPDATE publishers SET status = 'PublisherStatusBanned' WHERE id = 'banned'");
    v1.close();

    const migrated = openDatabase(file);
    expect(migrated.pragma('user_version', { simple: true })).toBe(migrations.length);
    const found = await createSqliteRegistryStore(migrated, { rankLimit: 0 }).searchNodes({
      terms: ['video'],
      offset: 0,
      limit: 10,
    });
    // the banned publisher's node is never in the first group (whether lists show it at all is another rule)
    const ids = found.rows.map((node) => node.id);
    expect(ids[0]).toBe('video-one');
    expect(ids.filter((id) => id !== 'video-banned')).toEqual(['video-one', 'other']);
  });
});
