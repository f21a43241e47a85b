// `nodereg scan` keeps each file's scan under the user's cache, keyed by the file's SHA-256, its path,
// the scanner's code and the modules it imports relatively (directly or not): a file unchanged is not
// scanned again, a file changed (or a helper it imports) is. --no-cache reads and
// writes nothing.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheFileFor, ScanCache } from '../../src/scan/cache.js';
import { scanFiles } from '../../src/scan/run.js';
import { runInProcess } from '../cli/in-process.js';
import { tempDir } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';

const inputs = (root: string, paths: string[]) =>
  paths.map((path) => ({ path, abs: join(root, path), size: statSync(join(root, path)).size }));
const rows = (findings: { file: string; line: number; rule: string }[]) =>
  findings.map((f) => `${f.file}:${f.line} ${f.rule}`);

/** Puts a made-up finding into every cached scan of `file`: seen in a report only if the entry is read. */
function plant(cache: string, file: string): number {
  const stored = JSON.parse(readFileSync(cache, 'utf8'));
  let planted = 0;
  for (const scan of Object.values(stored.entries) as { findings: object[] }[]) {
    if (scan.findings.length) continue;
    scan.findings.push({
      rule: 'obfuscation',
      severity: 'medium',
      file,
      line: 99,
      column: 1,
      message: 'planted',
      hint: 'h',
    });
    planted++;
  }
  writeFileSync(cache, JSON.stringify(stored));
  return planted;
}

describe('the scan cache', () => {
  it('a file unchanged is read from the cache; changed, it is scanned anew', async () => {
    const root = writeTree(tempDir('nodereg-cache-'), { 'a.py': 'import os\nx = 1\n' });
    const cache = join(tempDir('nodereg-cache-home-'), 'scan.json');
    const files = inputs(root, ['a.py']);
    expect(rows((await scanFiles(files, { cache })).findings)).toEqual([]);
    expect(plant(cache, 'a.py')).toBe(1);
    expect(rows((await scanFiles(files, { cache })).findings)).toEqual(['a.py:99 obfuscation']);
    writeFileSync(join(root, 'a.py'), 'import os\nos.system(os.environ["CMD"])\n');
    expect(rows((await scanFiles(inputs(root, ['a.py']), { cache })).findings)).toEqual(['a.py:2 command-injection']);
  });

  it('a module that imports from its package is scanned anew when a module of the package changes', async () => {
    const root = writeTree(tempDir('nodereg-cache-'), {
      'helpers.py': 'def run_script(args):\n    return args\n',
      '__init__.py': 'from .helpers import run_script\n\nrun_script(["pip", "install", "numpy"])\n',
    });
    const cache = join(tempDir('nodereg-cache-home-'), 'scan.json');
    const paths = ['__init__.py', 'helpers.py'];
    expect(rows((await scanFiles(inputs(root, paths), { cache })).findings)).toEqual([]);
    writeFileSync(
      join(root, 'helpers.py'),
      'import subprocess\n\ndef run_script(args):\n    return subprocess.run(args)\n',
    );
    expect(rows((await scanFiles(inputs(root, paths), { cache })).findings)).toEqual(['__init__.py:3 runtime-install']);
  });

  it("a module's key changes with the modules it imports relatively, directly or not, and with no other", () => {
    const cache = ScanCache.open(join(tempDir('nodereg-cache-home-'), 'scan.json'))!;
    const texts = (deep: string, other: string) =>
      new Map(
        Object.entries({
          '__init__.py': 'x = 1; from .helpers import run_script\n',
          'helpers.py': 'from .deep import a\n',
          'deep.py': deep,
          'other.py': other,
        }).map(([path, text]) => [path, Buffer.from(text)]),
      );
    const before = cache.keys(texts('a = 1\n', 'b = 1\n'), false);
    const otherChanged = cache.keys(texts('a = 1\n', 'b = 2\n'), false);
    const deepChanged = cache.keys(texts('a = 2\n', 'b = 1\n'), false);
    expect(otherChanged.get('__init__.py')).toBe(before.get('__init__.py'));
    expect(otherChanged.get('other.py')).not.toBe(before.get('other.py'));
    expect(deepChanged.get('__init__.py')).not.toBe(before.get('__init__.py'));
    expect(deepChanged.get('helpers.py')).not.toBe(before.get('helpers.py'));
    expect(cache.keys(texts('a = 1\n', 'b = 1\n'), true).get('other.py')).not.toBe(before.get('other.py'));
  });

  it('nodereg scan keeps it under $XDG_CACHE_HOME/nodereg/scan; --no-cache writes none', async () => {
    const root = writeTree(tempDir('nodereg-cache-'), {
      'pyproject.toml': '[project]\nname = "cached"\nversion = "1.0.0"\ndescription = "C"\nlicense = "MIT"\n',
      '__init__.py': 'import os\nNODE_CLASS_MAPPINGS = {}\n',
    });
    const none = tempDir('nodereg-cache-xdg-');
    expect((await runInProcess(['scan', root, '--no-cache'], { env: { XDG_CACHE_HOME: none } })).code).toBe(0);
    expect(existsSync(join(none, 'nodereg'))).toBe(false);
    const xdg = tempDir('nodereg-cache-xdg-');
    expect((await runInProcess(['scan', root], { env: { XDG_CACHE_HOME: xdg } })).code).toBe(0);
    const file = cacheFileFor(root, { XDG_CACHE_HOME: xdg });
    expect(readdirSync(join(xdg, 'nodereg', 'scan'))).toEqual([file.split('/').pop()]);
    expect(plant(file, '__init__.py')).toBe(1);
    const again = await runInProcess(['scan', root, '--json'], { env: { XDG_CACHE_HOME: xdg } });
    expect(rows(JSON.parse(again.stdout).findings)).toEqual(['__init__.py:99 obfuscation']);
  });

  it('an entry of another shape (edited or damaged) is scanned anew, never read', async () => {
    const root = writeTree(tempDir('nodereg-cache-'), { 'a.py': 'import os\nos.system(os.environ["CMD"])\n' });
    const cache = join(tempDir('nodereg-cache-home-'), 'scan.json');
    const files = inputs(root, ['a.py']);
    expect(rows((await scanFiles(files, { cache })).findings)).toEqual(['a.py:2 command-injection']);
    const finding = {
      rule: 'obfuscation',
      severity: 'medium',
      file: 'a.py',
      line: 9,
      column: 1,
      message: 'm',
      hint: 'h',
    };
    const damaged: unknown[] = [
      1,
      null,
      { findings: [] },
      { findings: 'x', stopped: [], omitted: 0 },
      { findings: [], stopped: 'x', omitted: 0 },
      { findings: [{ ...finding, rule: 'no-such-rule' }], stopped: [], omitted: 0 },
      { findings: [{ ...finding, line: '9' }], stopped: [], omitted: 0 },
      { findings: [finding], stopped: ['no-such-rule'], omitted: 0 },
      { findings: [finding], stopped: [], omitted: 0, loads: [{ path: 1, line: 1 }] },
    ];
    const stored = JSON.parse(readFileSync(cache, 'utf8'));
    const [key] = Object.keys(stored.entries);
    for (const entry of damaged) {
      writeFileSync(cache, JSON.stringify({ ...stored, entries: { [key]: entry } }));
      expect(rows((await scanFiles(files, { cache })).findings)).toEqual(['a.py:2 command-injection']);
    }
    // the same entry with a shape a scan has is read (the test can tell a read entry from a scan)
    writeFileSync(
      cache,
      JSON.stringify({ ...stored, entries: { [key]: { findings: [finding], stopped: [], omitted: 0 } } }),
    );
    expect(rows((await scanFiles(files, { cache })).findings)).toEqual(['a.py:9 obfuscation']);
  });
});
