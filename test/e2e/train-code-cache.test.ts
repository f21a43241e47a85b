// The build's training runs of the CLI (scripts/train-code-cache.js) start a registry of their own: a
// NODEREG_DATABASE_URL or NODEREG_STORAGE_URL in the builder's environment must not send them into
// the builder's registry (a publisher and node written there, its admin token replaced).
import { cpSync, mkdirSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { startServer, tempDir } from '../helpers.js';
import { client } from '../server/fixtures.js';

const ROOT = resolve(import.meta.dirname, '../..');

it('trains in a registry of its own, whatever NODEREG_* variables the build inherits', async () => {
  // A copy of the built checkout: the training writes the caches beside the bundles it runs.
  const root = tempDir('nodereg-train-root-');
  for (const path of ['package.json', 'bin', 'dist']) cpSync(join(ROOT, path), join(root, path), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  const theirs = await startServer();
  const database = join(theirs.dataDir, 'registry.db');
  const { trainCodeCache } = await import(join(ROOT, 'scripts/train-code-cache.js'));
  const saved = { ...process.env };
  Object.assign(process.env, { NODEREG_DATABASE_URL: database, NODEREG_STORAGE_URL: join(tempDir(), 'nowhere') });
  mkdirSync(process.env.NODEREG_STORAGE_URL!);
  try {
    await trainCodeCache(root, ['cli/quick.cjs', 'cli/quick-publish.cjs'].map((bundle) => join(root, 'dist', bundle)));
  } finally {
    process.env = saved;
  }
  try {
    expect((await client(theirs).get('/users/me', { token: theirs.adminToken })).status, 'their admin token still works').toBe(200);
    const db = new Database(database, { readonly: true });
    try {
      expect(db.prepare('SELECT id FROM publishers').all()).toEqual([]);
      expect(db.prepare('SELECT id FROM nodes').all()).toEqual([]);
    } finally {
      db.close();
    }
  } finally {
    await theirs.close();
  }
}, 120_000);
