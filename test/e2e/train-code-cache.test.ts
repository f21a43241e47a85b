// The V8 code cache of the CLI's two CommonJS bundles (bin/compiled.js): a cache that cannot be used
// changes nothing of what the CLI does. The build's training runs of the CLI (scripts/train-code-cache.js) start a registry of their own: a
// NODEREG_DATABASE_URL or NODEREG_STORAGE_URL in the builder's environment must not send them into
// the builder's registry (a publisher and node written there, its admin token replaced).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it, vi } from 'vitest';
import { cliEnv, startServer, tempDir } from '../helpers.js';
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

it('runs `node show` and `publish` as usual when their cache is corrupt, stale, missing or unreadable', () => {
  const root = builtCopy();
  const cache = join(root, 'dist/cli/quick.cjs.v8-cache');
  const publishCache = join(root, 'dist/cli/quick-publish.cjs.v8-cache');
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [join(root, 'bin/nodereg.js'), ...args, '--registry', 'http://127.0.0.1:9'], { env: cliEnv(tempDir()), encoding: 'utf8' });
  const expected = { show: run('node', 'show', 'some-node'), publish: run('publish', tempDir()) };
  expect(expected.show.status, expected.show.stderr).toBe(1); // nothing listens on port 9
  expect(expected.publish.status, expected.publish.stderr).toBe(2); // no pyproject.toml
  const cases: [string, () => void][] = [
    ['corrupt', () => [cache, publishCache].forEach((file) => writeFileSync(file, randomBytes(4096)))],
    ['stale', () => [cache, publishCache].forEach((file) => appendFileSync(file.replace(/\.v8-cache$/, ''), '\n// changed\n'))],
    ['missing', () => [cache, publishCache].forEach((file) => rmSync(file))],
    ['unreadable', () => [cache, publishCache].forEach((file) => mkdirSync(file))],
  ];
  for (const [what, spoil] of cases) {
    spoil();
    const show = run('node', 'show', 'some-node');
    const publish = run('publish', tempDir());
    // the refused connection's message says how long its tries took, which the machine's load moves
    const withoutTime = (stderr: string) => stderr.replace(/ in \d+(\.\d+)? m?s\b/g, ' in N s');
    expect({ code: show.status, stderr: withoutTime(show.stderr) }, what).toEqual({ code: 1, stderr: withoutTime(expected.show.stderr) });
    expect({ code: publish.status, stderr: publish.stderr.replace(/\/tmp\S*/g, 'DIR') }, what).toEqual({ code: 2, stderr: expected.publish.stderr.replace(/\/tmp\S*/g, 'DIR') });
  }
});
