// The V8 code cache of the CLI's two CommonJS bundles (bin/compiled.js), written by runs of what they
// serve, so that it holds the functions those commands run and not only the bundles' top level: a
// `publish` of a small generated node, as CI runs it, to a registry started here on 127.0.0.1, then
// `node show` of that node. If a run fails, the cache of the top level alone is written instead.
// Each run is a process of its own without NODE_OPTIONS, as `nodereg` runs: V8 refuses a cache made with
// other V8 flags.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { listeningUrl } from './listening.js';

const STARTED_WITHIN_MS = 30_000;
const RUN_WITHIN_MS = 120_000;

export async function trainCodeCache(root, bundles) {
  const bin = resolve(root, 'bin/nodereg.js');
  const { TRAINING } = createRequire(import.meta.url)(resolve(root, 'bin/compiled.js'));
  // No NODEREG_* of the builder's either: NODEREG_DATABASE_URL would train in their registry (and
  // replace its admin token), NODEREG_STORAGE_URL upload there.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_OPTIONS' && !name.startsWith('NODEREG_')));
  let work;
  let server;
  try {
    // Inside the try: a temp dir that cannot be made (TMPDIR gone) costs the training, not the build.
    work = mkdtempSync(join(tmpdir(), 'nodereg-train-'));
    const env = { ...inherited, HOME: join(work, 'home'), XDG_CONFIG_HOME: join(work, 'config'), XDG_DATA_HOME: join(work, 'data-home'), NO_COLOR: '1' };
    const token = `nrg_u_${randomBytes(16).toString('hex')}`;
    server = spawn(process.execPath, [bin, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', join(work, 'data'), '--log', 'off'], {
      env: { ...env, NODEREG_ADMIN_TOKEN: token },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const url = await listeningUrl(server, STARTED_WITHIN_MS);
    const created = await fetch(`${url}/publishers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'train', name: 'Train' }),
    });
    if (created.status !== 201) throw new Error(`POST /publishers answered ${created.status}`);
    const project = writeProject(join(work, 'train-node'));
    // A run that hangs fails the training, never the build.
    const run = (...args) =>
      execFileSync(process.execPath, [bin, ...args], { env: { ...env, NODEREG_TOKEN: token, NODEREG_REGISTRY: url, [TRAINING]: '1' }, stdio: 'ignore', timeout: RUN_WITHIN_MS });
    run('publish', project);
    run('node', 'show', 'train-node');
  } catch (error) {
    console.warn(`the code cache holds the bundles' top level only: its training run failed (${error.message})`);
    for (const bundle of bundles) {
      execFileSync(process.execPath, ['-e', `require(${JSON.stringify(resolve(root, 'bin/compiled.js'))}).requireCompiled(${JSON.stringify(bundle)})`], { env: { ...inherited, [TRAINING]: '1' }, stdio: 'inherit' });
    }
  } finally {
    if (server) {
      server.kill();
      await new Promise((done) => (server.exitCode === null && server.signalCode === null ? server.once('exit', done) : done()));
    }
    if (work) rmSync(work, { recursive: true, force: true });
  }
}

/** A small node as publishers make them: Python sources, a manifest, a stored image. */
function writeProject(dir) {
  mkdirSync(join(dir, 'web'), { recursive: true });
  writeFileSync(
    join(dir, 'pyproject.toml'),
    '[project]\nname = "train-node"\nversion = "1.0.0"\ndescription = "Trains the code cache"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "train"\n',
  );
  writeFileSync(join(dir, '__init__.py'), 'from .nodes import NODE_CLASS_MAPPINGS\n\n__all__ = ["NODE_CLASS_MAPPINGS"]\n');
  const body = Array.from({ length: 200 }, (_, i) => `    def step_${i}(self, image):\n        return (image * ${i + 1},)\n`).join('\n');
  writeFileSync(join(dir, 'nodes.py'), `import os\n\nclass Scale:\n    CATEGORY = "train"\n\n${body}\nNODE_CLASS_MAPPINGS = {"Scale": Scale}\n`);
  writeFileSync(join(dir, 'web', 'preview.png'), randomBytes(64 * 1024));
  return dir;
}
