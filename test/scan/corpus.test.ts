// The scan against a corpus of disguised payloads (test/scan/corpus/): one file per technique, grouped
// by family, each line that must be found ending with `# expect: RULE[, RULE]` (`// expect:` in
// JavaScript); the files under silent/ are look-alikes and the false positives users met, where only
// the lines so marked may be found. The whole corpus is scanned as one tree, as `nodereg scan` does, so
// that what a file loads as code and what a module imports from its package are followed. A zip in the
// corpus stands for its members (`lib.zip/mod.py`), marked alike: found when the code puts it on sys.path.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import yauzl from 'yauzl';
import { describe, expect, it } from 'vitest';
import { scanFiles } from '../../src/scan/run.js';

const ROOT = join(import.meta.dirname, 'corpus');
const EXPECT = /(?:#|\/\/) expect: ([a-z0-9-]+(?:, [a-z0-9-]+)*)\s*$/;

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const abs = join(dir, name);
    return statSync(abs).isDirectory() ? walk(abs) : [abs];
  });
}

const files = walk(ROOT).map((abs) => ({
  path: relative(ROOT, abs).split('\\').join('/'),
  abs,
  size: statSync(abs).size,
}));
/** The members of a zip of the corpus, as `path/member` and their text. */
async function members(path: string, abs: string): Promise<{ path: string; text: string }[]> {
  const zip = await yauzl.fromBufferPromise(readFileSync(abs), { lazyEntries: true });
  const out: { path: string; text: string }[] = [];
  await new Promise((resolve, reject) => {
    zip.on('entry', async (entry: yauzl.Entry) => {
      const chunks: Buffer[] = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      out.push({ path: `${path}/${entry.fileName}`, text: Buffer.concat(chunks).toString('utf8') });
      zip.readEntry();
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  return out;
}

/** Each file of the corpus with its text; a zip's members in its place. */
const cases = (
  await Promise.all(
    files.map(async (f) =>
      f.path.endsWith('.zip') ? members(f.path, f.abs) : [{ path: f.path, text: readFileSync(f.abs, 'utf8') }],
    ),
  )
).flat();

/** `rule:line` marked in a file. */
const expected = (text: string) =>
  text
    .split('\n')
    .flatMap(
      (line, i) =>
        EXPECT.exec(line)?.[1]
          .split(', ')
          .map((rule) => `${rule}:${i + 1}`) ?? [],
    )
    .sort();
const report = scanFiles(files, { threads: 1 });
/** `rule:line` found in a file (info findings, which say how far the scan read, aside). */
const found = async (path: string) =>
  [
    ...new Set(
      (await report).findings.filter((f) => f.file === path && f.severity !== 'info').map((f) => `${f.rule}:${f.line}`),
    ),
  ].sort();

describe('the scan corpus', () => {
  const marked = cases.filter((f) => expected(f.text).length);
  it('holds a file per technique, with its expected rule and line', () => {
    expect(marked.length).toBeGreaterThanOrEqual(60);
  });

  for (const file of cases) {
    const silent = file.path.startsWith('silent/');
    it(`${file.path}: ${silent ? 'only its marked lines are found' : 'found at its marked lines, and nothing else'}`, async () => {
      expect(await found(file.path)).toEqual(expected(file.text));
    });
  }

  it('recall is 100%', async () => {
    const missed = [];
    for (const file of marked) {
      const got = new Set(await found(file.path));
      for (const want of expected(file.text)) if (!got.has(want)) missed.push(`${file.path} ${want}`);
    }
    expect(missed).toEqual([]);
  });
});
