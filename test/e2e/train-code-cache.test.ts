// The build's training runs of the CLI (scripts/train-code-cache.js) start a registry of their own: a
// NODEREG_DATABASE_URL or NODEREG_STORAGE_URL in the builder's environment must not send them into
// the builder's registry (a publisher and node written there, its admin token replaced).
import { cpSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it, vi } from 'vitest';
import { startServer, tempDir } from '../helpers.js';
import { client } from '../server/fixtures.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** A copy of the built checkout: the training writes the caches beside the bundles it runs. */
function builtCopy(): string {
  const root = tempDir('nodereg-train-root-');
  for (const path of ['package.json', 'bin', 'dist']) cpSync(join(ROOT, path), join(root, path), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return root;
}
const bundlesOf = (root: string) => ['cli/quick.cjs', 'cli/quick-publish.cjs'].map((bundle) => join(root, 'dist', bundle));

it('trains in a registry of its own, whatever NODEREG_* variables the build inherits', async () => {
  const root = builtCopy();
  const theirs = await startServer();
  const database = join(theirs.dataDir, 'registry.db');
  const { trainCodeCache } = await import(join(ROOT, 'scripts/train-code-cache.js'));
  vi.stubEnv('NODEREG_DATABASE_URL', database);
  vi.stubEnv('NODEREG_STORAGE_URL', join(tempDir(), 'nowhere'));
  mkdirSync(process.env.NODEREG_STORAGE_URL!);
  try {
    await trainCodeCache(root, bundlesOf(root));
  } finally {
    vi.unstubAllEnvs();
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

it('without a temp dir to train in, still writes a cache this Node takes (of the top level) and does not fail the build', async () => {
  const root = builtCopy();
  for (const bundle of bundlesOf(root)) rmSync(`${bundle}.v8-cache`);
  const { trainCodeCache } = await import(join(ROOT, 'scripts/train-code-cache.js'));
  const { cacheAccepted } = createRequire(import.meta.url)(join(root, 'bin/compiled.js'));
  vi.stubEnv('TMPDIR', join(tempDir(), 'gone'));
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  try {
    await trainCodeCache(root, bundlesOf(root));
  } finally {
    vi.unstubAllEnvs();
    warn.mockRestore();
  }
  for (const bundle of bundlesOf(root)) expect(cacheAccepted(bundle), bundle).toBe(true);
}, 120_000);
