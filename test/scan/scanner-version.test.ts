// The scanner's version, part of every scan cache key: a change to the scanner's code (src/scan, what it
// imports of ours, its WebAssembly grammars) gives another, a change elsewhere does not. The built CLI
// reads the version `npm run build` wrote into dist/, and keeps no cache without one.
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cacheFileFor } from '../../src/scan/cache.js';
import { GRAMMARS, RUNTIME, scannerVersion, VERSION_FILE } from '../../src/scan/version.js';
import { checkHints } from '../cli/hint-check.js';
import { tempDir } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** A made-up project: a scanner that imports two modules of src/shared and a package, a server beside it, its grammars. */
function project(): string {
  const wasm = Object.fromEntries(
    [RUNTIME, ...Object.values(GRAMMARS)].flatMap((path) => [
      [`node_modules/${path}`, `wasm of ${path}`],
      [`node_modules/${path.split('/')[0]}/package.json`, '{}'],
    ]),
  );
  return writeTree(tempDir('nodereg-scanner-version-'), {
    'package.json': '{}',
    'src/scan/run.ts':
      "import { Parser } from 'web-tree-sitter';\nimport { WORDS } from '../shared/words.js';\nexport const run = () => [Parser, WORDS];\n",
    'src/scan/rules/one.ts': "export { TUNING } from '../../shared/tuning.js';\n",
    'src/shared/words.ts': "export const WORDS = ['eval'];\n",
    'src/shared/tuning.ts': 'export const TUNING = 1;\n',
    'src/shared/other.ts': 'export const OTHER = 1;\n',
    'src/server/routes.ts':
      "import { Hono } from 'hono';\nimport { run } from '../scan/run.js';\nexport const routes = [Hono, run];\n",
    'node_modules/hono/package.json': '{ "version": "4.0.0" }',
    ...wasm,
  });
}

describe("the scanner's version", () => {
  it("changes with the scanner's files, the modules they import, and its grammars; with nothing else", () => {
    const root = project();
    const before = scannerVersion(root);
    expect(scannerVersion(root)).toBe(before);
    /** The version with `path` written (or added) as `text`; the file is put back after. */
    const after = (path: string, text: string) => {
      const file = join(root, path);
      const old = existsSync(file) ? readFileSync(file) : undefined;
      writeFileSync(file, text);
      const version = scannerVersion(root);
      if (old) writeFileSync(file, old);
      else rmSync(file);
      return version;
    };
    expect(
      after('src/scan/run.ts', "import { WORDS } from '../shared/words.js';\nexport const run = () => WORDS;\n"),
    ).not.toBe(before);
    expect(after('src/shared/words.ts', "export const WORDS = ['exec'];\n")).not.toBe(before);
    expect(after('src/shared/tuning.ts', 'export const TUNING = 2;\n')).not.toBe(before);
    expect(after(`node_modules/${GRAMMARS.python}`, 'another grammar')).not.toBe(before);
    expect(after(`node_modules/${RUNTIME}`, 'another runtime')).not.toBe(before);
    // the runtime's JavaScript (its query predicates run there), as its release: the package's package.json
    expect(after('node_modules/web-tree-sitter/package.json', '{ "version": "9.9.9" }')).not.toBe(before);
    expect(after('src/scan/added.ts', 'export const ADDED = 1;\n')).not.toBe(before);
    expect(after('src/server/routes.ts', 'export const routes = [];\n')).toBe(before);
    expect(after('src/shared/other.ts', 'export const OTHER = 2;\n')).toBe(before);
    expect(after('node_modules/hono/package.json', '{ "version": "5.0.0" }')).toBe(before);
  });

  // An installed copy (bin, dist and package.json, as the tarball holds them; dist read-only), its version
  // file as written, changed, missing, empty or garbage: only a version the build could write keys a cache.
  it('an installed CLI keys its cache with the version file it ships, and keeps none without one', async () => {
    const written = readFileSync(join(ROOT, 'dist', VERSION_FILE), 'utf8').trim();
    expect(written).toBe(scannerVersion(ROOT));
    const node = writeTree(tempDir('nodereg-scanner-version-node-'), {
      'pyproject.toml': '[project]\nname = "versioned"\nversion = "1.0.0"\ndescription = "V"\nlicense = "MIT"\n',
      '__init__.py': 'import os\nos.system("rm -rf /tmp/x")\n',
    });
    const other = 'f'.repeat(64);
    for (const [content, kept] of [
      [`${written}\n`, written],
      [`${other}\n`, other],
      [undefined, undefined],
      ['', undefined],
      ['\0garbage\n', undefined],
    ] as const) {
      const installed = tempDir('nodereg-scanner-version-installed-');
      for (const dir of ['bin', 'dist', 'package.json'])
        cpSync(join(ROOT, dir), join(installed, dir), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules'), join(installed, 'node_modules'));
      const versionFile = join(installed, 'dist', VERSION_FILE);
      if (content === undefined) rmSync(versionFile);
      else writeFileSync(versionFile, content);
      chmodSync(join(installed, 'dist'), 0o555);
      const xdg = tempDir('nodereg-scanner-version-xdg-');
      const scan = promisify(execFile)(process.execPath, [join(installed, 'bin/nodereg.js'), 'scan', node], {
        env: { ...process.env, XDG_CACHE_HOME: xdg, NO_COLOR: '1' },
      });
      // writable again, for the temp dir's removal
      const { stdout, stderr } = await scan.finally(() => chmodSync(join(installed, 'dist'), 0o755));
      await checkHints(stdout, stderr);
      expect(stdout).toContain('destructive-fs');
      const cacheFile = cacheFileFor(node, { XDG_CACHE_HOME: xdg });
      expect(existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, 'utf8')).version : undefined).toBe(kept);
    }
  });
});
