// Migration 'listed-count': a registry upgraded with nodes in it starts with the count of the nodes its
// lists show (Active, publisher not banned), as one that counted them from the first node would.
import { expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/server/store/db.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { databaseBefore } from './old-schema.js';

it('counts the listed nodes stored before it (SQLite)', async () => {
  const { file, db: old, stamp } = databaseBefore('listed-count', ['acme', 'banned']);
  const statuses = ['NodeStatusActive', 'NodeStatusActive', 'NodeStatusDeleted', 'NodeStatusBanned'];
  for (const publisher of ['acme', 'banned']) {
    for (const [i, status] of statuses.entries()) {
      old.prepare('INSERT INTO nodes (id, publisher_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run(`${publisher}-${i}`, publisher, status, stamp, stamp);
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
