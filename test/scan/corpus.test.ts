// The scan against a corpus of disguised payloads (test/scan/corpus/): one file per technique, grouped
// by family, each line that must be found ending with `# expect: RULE[, RULE]` (`// expect:` in
// JavaScript); the files under silent/ are look-alikes and the false positives users met, where only
// the lines so marked may be found. The whole corpus is scanned as one tree, as `nodereg scan` does, so
// that what a file loads as code and what a module imports from its package are followed.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
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
/** `rule:line` marked in a file. */
const expected = (abs: string) =>
  readFileSync(abs, 'utf8')
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
  const marked = files.filter((f) => expected(f.abs).length);
  it('holds a file per technique, with its expected rule and line', () => {
    expect(marked.length).toBeGreaterThanOrEqual(60);
  });

  for (const file of files) {
    const silent = file.path.startsWith('silent/');
    it(`${file.path}: ${silent ? 'only its marked lines are found' : 'found at its marked lines, and nothing else'}`, async () => {
      expect(await found(file.path)).toEqual(expected(file.abs));
    });
  }

  it('recall is 100%', async () => {
    const missed = [];
    for (const file of marked) {
      const got = new Set(await found(file.path));
      for (const want of expected(file.abs)) if (!got.has(want)) missed.push(`${file.path} ${want}`);
    }
    expect(missed).toEqual([]);
  });
});
