// The web store on both databases: sessions are found while live, not once expired or deleted, and
// an expired one is dropped when another is created; the review queue's versions by status, oldest first.
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/server/store/db.js';
import { createPostgresRegistryStore, migratePostgres } from '../../src/server/store/postgres-registry-store.js';
import type { RegistryStore } from '../../src/server/store/registry-store.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { tempDir } from '../helpers.js';
import { testPostgres } from '../postgres.js';

const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

const postgresServer = testPostgres();
const backends: [string, () => Promise<RegistryStore>][] = [
  [
    'sqlite',
    async () => {
      const db = openDatabase(join(tempDir('nodereg-web-store-'), 'registry.db'));
      closers.push(() => db.close());
      return createSqliteRegistryStore(db);
    },
  ],
];
if (postgresServer) {
  backends.push([
    'postgresql',
    async () => {
      const sql = postgres(await (await postgresServer).migratedDatabase(), { max: 4, onnotice: () => {} });
      await migratePostgres(sql);
      closers.push(() => sql.end());
      return createPostgresRegistryStore(sql);
    },
  ]);
}

describe.each(backends)('web store on %s', (_name, open) => {
  it('keeps sessions until they expire or are deleted', async () => {
    const store = await open();
    const later = new Date(Date.now() + 60_000).toISOString();
    const earlier = new Date(Date.now() - 1_000).toISOString();
    const session = { user_id: 'u1', token_id: 't1', csrf: 'c1', expires_at: later };
    await store.createSession('live', session);
    await store.createSession('old', { ...session, expires_at: earlier });
    expect(await store.getSession('live')).toEqual(session);
    expect(await store.getSession('old')).toBeUndefined();
    expect(await store.getSession('unknown')).toBeUndefined();
    await store.deleteSession('live');
    expect(await store.getSession('live')).toBeUndefined();
    expect(await store.versionsWithStatus('NodeVersionStatusFlagged', 10)).toEqual([]);
  });
});
