// bin/nodereg.js: a bare --version is answered by the launcher itself (CommonJS, before the bundle
// loads); a plain `node show ID` and a plain `publish` run from dist/cli/quick.cjs and
// dist/cli/quick-publish.cjs without Node's ES module loader; every other form goes through the CLI's
// ES module bundle. An unbuilt checkout: test/cli/hints-and-downloads.test.ts.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv, runCli, startServer, tempDir, type TestServer } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';

const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8'));

describe('launcher', () => {
  it('compiles the bundles of `node show` and `publish` with a V8 code cache that this Node takes', () => {
    const { cacheAccepted } = createRequire(import.meta.url)('../../bin/compiled.js');
    for (const bundle of ['quick.cjs', 'quick-publish.cjs']) expect(cacheAccepted(resolve(BIN, '../../dist/cli', bundle)), bundle).toBe(true);
  });

  it('writes caches trained by runs of those commands, which hold far more than a cache of the bundles\' top level', () => {
    // A cache of the top level alone, written the build's way for a copy of each bundle (scripts/train-code-cache.js falls back to it).
    const { TRAINING } = createRequire(import.meta.url)('../../bin/compiled.js');
    const dir = tempDir();
    for (const bundle of ['quick.cjs', 'quick-publish.cjs']) {
      const built = resolve(BIN, '../../dist/cli', bundle);
      const copy = join(dir, bundle);
      writeFileSync(copy, readFileSync(built));
      execFileSync(process.execPath, ['-e', `require(${JSON.stringify(resolve(BIN, '../compiled.js'))}).requireCompiled(${JSON.stringify(copy)})`], {
        env: { ...process.env, [TRAINING]: '1' },
      });
      expect(statSync(`${built}.v8-cache`).size, bundle).toBeGreaterThan(2 * statSync(`${copy}.v8-cache`).size);
    }
  });

  it.each([['--version'], ['-V'], ['--json', '--version']])('%j prints the version of package.json', async (...args) => {
    const result = await runCli(args);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  describe('which bundle a command runs from', () => {
    let server: TestServer;
    const preload = join(tempDir(), 'report-loaded.cjs');

    beforeAll(async () => {
      server = await startServer();
      // Says, as the process exits, whether an ES module was run and which CommonJS files of ours were loaded.
      writeFileSync(
        preload,
        "process.on('exit', () => process.stderr.write('\\nLOADED ' + JSON.stringify({ esm: process.moduleLoadList.some((m) => m.endsWith('esm/module_job')), cjs: Object.keys(require.cache).filter((f) => f.includes('/dist/')) }) + '\\n'));",
      );
    });
    afterAll(() => server?.close());

    // stdout is a pipe; the server runs in this process, so the child is awaited, never waited for
    const loaded = (args: string[]) =>
      new Promise<{ status: number | null; esm: boolean; cjs: string[] }>((done) => {
        const child = execFile(process.execPath, ['-r', preload, BIN, '--registry', server.url, ...args], { env: cliEnv(tempDir()) }, (_error, _stdout, stderr) =>
          done({ status: child.exitCode, ...JSON.parse(/^LOADED (.*)$/m.exec(stderr)![1]) }),
        );
      });

    it('`node show ID` runs from quick.cjs alone', async () => {
      const result = await loaded(['node', 'show', 'ghost']);
      expect(result).toMatchObject({ status: 5, esm: false });
      expect(result.cjs.sort()).toEqual(['quick-args.cjs', 'quick.cjs'].map((file) => resolve(BIN, '../../dist/cli', file)));
    });

    it.each([[['node', 'versions', 'ghost']], [['node', 'show', 'ghost', '--help']], [['node', 'show', 'search']]])('%j goes through the full program', async (args) => {
      const result = await loaded(args);
      expect(result.esm).toBe(true);
      expect(result.cjs).toEqual([resolve(BIN, '../../dist/cli/quick-args.cjs')]);
    });

    it('a plain `publish` runs from quick-publish.cjs, and `publish --help` through the full program', async () => {
      const dir = writeTree(tempDir(), { 'pyproject.toml': '[project]\nname = "launched"\nversion = "1.0.0"\ndescription = "d"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "launcher"\n', '__init__.py': '' });
      const plain = await loaded(['publish', dir]);
      expect(plain).toMatchObject({ status: 4, esm: false }); // no token
      expect(plain.cjs.sort()).toEqual(['quick-args.cjs', 'quick-publish.cjs'].map((file) => resolve(BIN, '../../dist/cli', file)));
      const help = await loaded(['publish', '--help']);
      expect(help).toMatchObject({ status: 0, esm: true });
      expect(help.cjs).toEqual([resolve(BIN, '../../dist/cli/quick-args.cjs')]);
    });
  });
});
