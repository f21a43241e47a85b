// What a hostile file costs the scan: findings are bounded (per rule and file, then in all, the most
// severe kept, the rest counted) so that a file of hundreds of thousands of findings costs its parse
// and little more, and the verdict stays right; and a query never starts matches past 60,000 levels.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  notParsed,
  SCAN_MAX_FINDINGS_PER_RULE,
  SCAN_MAX_REPORTED_FINDINGS,
  SCAN_PARSE_UNITS,
} from '../../src/shared/scan.js';
import type { Finding } from '../../src/contract/scan.js';
import { mergeReports, scanFiles, Tally } from '../../src/scan/run.js';
import { ScanWorker } from '../../src/scan/threads.js';
import { Scanner } from '../../src/scan/scanner.js';
import { tempDir } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';
import { garbage } from '../server/fixtures.js';

const scanner = await Scanner.load();
const MANY = 270_000;
// Far past the bound per rule, in the main thread; the file of MANY findings (2 MB) is scanned whole by
// the worker's heap test below, with a high finding of another rule after them too.
const FAR_PAST_BOUND = 30_000;

describe('findings are bounded', () => {
  it(`a file of ${FAR_PAST_BOUND} findings: ${SCAN_MAX_FINDINGS_PER_RULE} listed, the rule stopped there; a high finding of another rule after them is found`, () => {
    const text = `import os\n${'eval(x)\n'.repeat(FAR_PAST_BOUND)}os.system(cmd)\n`;
    const scan = scanner.scanFile('many.py', text);
    expect(scan.findings.filter((f) => f.rule === 'dynamic-execution')).toHaveLength(SCAN_MAX_FINDINGS_PER_RULE);
    expect(scan.stopped).toEqual(['dynamic-execution']);
    expect(scan.findings.filter((f) => f.rule === 'command-injection').map((f) => f.line)).toEqual([
      FAR_PAST_BOUND + 2,
    ]);
  }, 120_000);

  it('the same inside one function (one statement of 2 MB) and in a list: taken apart, still bounded', () => {
    for (const text of [
      `def run(x):\n${'    eval(x)\n'.repeat(MANY / 2)}`,
      `calls = [\n${'    eval(x),\n'.repeat(MANY / 2)}]\n`,
    ]) {
      const scan = scanner.scanFile('one.py', text);
      expect(scan.findings.filter((f) => f.rule === 'dynamic-execution')).toHaveLength(SCAN_MAX_FINDINGS_PER_RULE);
      // the resolution layer stops at its bound per file, and says so
      expect(scan.findings.filter((f) => f.rule === 'not-fully-analysed').map((f) => f.severity)).toEqual(['info']);
      expect(scan.stopped).toEqual(['dynamic-execution']);
    }
    // a statement larger than a piece, with one finding in its middle and one at its end: both found, once each
    const big = `def run(x):\n${'    y = [1, 2, 3]\n'.repeat(20_000)}    eval(x)\n${'    y = [1, 2, 3]\n'.repeat(20_000)}    return eval(x + 1)\n`;
    expect(
      scanner
        .scanText('big.py', big)
        .filter((f) => f.severity !== 'info')
        .map((f) => `${f.rule}:${f.line}`),
    ).toEqual(['dynamic-execution:20002', 'dynamic-execution:40003']);
  }, 120_000);

  it('suppressed findings never take the place of one that is not: the unsuppressed call after 150 suppressed ones is listed', () => {
    // (a comment covers its line and the next: one line between)
    const text = `${'eval(x)  # nodereg: allow dynamic-execution -- test data\n'.repeat(150)}y = 1\neval(y)\n`;
    const scan = scanner.scanFile('s.py', text);
    expect(scan.findings.filter((f) => !f.suppressed).map((f) => f.line)).toEqual([152]);
    expect(scan.findings.filter((f) => f.suppressed)).toHaveLength(SCAN_MAX_FINDINGS_PER_RULE);
    expect(scan.omitted).toBe(50);
  });

  it('100,000 nested eval( calls: bounded like flat ones (the query took 179 s per rule, and nodereg scan ran 460 s and died out of memory)', () => {
    const scan = scanner.scanFile('nest.py', `${'eval('.repeat(100_000)}x${')'.repeat(100_000)}\n`);
    expect(scan.findings.filter((f) => f.rule === 'dynamic-execution')).toHaveLength(SCAN_MAX_FINDINGS_PER_RULE);
    expect(scan.findings.find((f) => f.rule === 'not-fully-analysed')?.message).toMatch(
      /nested more than 200 levels deep at line 1 was not followed/,
    );
    expect(scan.stopped).toEqual(['dynamic-execution']);
  }, 60_000);

  it(`a report lists ${SCAN_MAX_REPORTED_FINDINGS} findings, the most severe first, and counts the others`, () => {
    const finding = (file: string, line: number, severity: Finding['severity']): Finding => ({
      rule: severity === 'high' ? 'dynamic-execution' : 'environment-manipulation',
      severity,
      file,
      line,
      column: 1,
      message: 'm',
      hint: 'h',
    });
    const tally = new Tally();
    for (let i = 0; i < 30; i++)
      tally.add(`m${i}.py`, {
        findings: Array.from({ length: 100 }, (_, line) => finding(`m${i}.py`, line + 1, 'medium')),
        stopped: [],
        omitted: 0,
      });
    tally.add('z.py', { findings: [finding('z.py', 7, 'high')], stopped: ['dynamic-execution'], omitted: 0 });
    const report = mergeReports([tally.report(31)], 31);
    expect(report.findings).toHaveLength(SCAN_MAX_REPORTED_FINDINGS);
    expect(report.findings.filter((f) => f.severity === 'high').map((f) => `${f.file}:${f.line}`)).toEqual(['z.py:7']);
    expect(report.omitted).toBe(3001 - SCAN_MAX_REPORTED_FINDINGS);
    expect(report.stopped).toEqual([{ file: 'z.py', rule: 'dynamic-execution' }]);
  });

  it(`the registry's kept worker scans the ${MANY}-finding file in a 64 MiB heap (it ran out of it), and finds the high finding of another rule after them`, async () => {
    const root = writeTree(tempDir(), { 'many.py': `import os\n${'eval(x)\n'.repeat(MANY)}os.system(cmd)\n` });
    const worker = new ScanWorker({ timeoutMs: 120_000, maxOldGenerationSizeMb: 64 });
    try {
      const report = await worker.run({
        kind: 'files',
        files: [{ path: 'many.py', abs: join(root, 'many.py') }],
        options: { server: true },
      });
      expect(report.findings.filter((f) => f.rule === 'dynamic-execution')).toHaveLength(SCAN_MAX_FINDINGS_PER_RULE);
      expect(report.stopped).toEqual([{ file: 'many.py', rule: 'dynamic-execution' }]);
      expect(report.findings.filter((f) => f.rule === 'command-injection').map((f) => f.line)).toEqual([MANY + 2]);
    } finally {
      await worker.stop();
    }
  }, 120_000);
});

describe('parse limits', () => {
  it('are counted in work units, not timed, so that a loaded machine decides as an idle one: the same file stops at the same limit every time; plain code passes', () => {
    const limits = { parseMs: 600_000, budgetMs: 600_000, parseUnits: 500 };
    const text = garbage(3, 64 * 1024).toString();
    const first = scanner.scanFile('g.py', text, { limits });
    expect(first.unparsed).toEqual({
      file: 'g.py',
      reason: notParsed.units(500),
      rules: ['dynamic-execution'],
      severity: 'high',
    });
    expect(scanner.scanFile('g.py', text, { limits }).unparsed).toEqual(first.unparsed);
    const plain = `${'def f(a, b=1):\n    return [a * b for b in range(3)]\n'.repeat(2_000)}eval(x)\n`;
    expect(
      scanner
        .scanFile('p.py', plain, { limits: { ...limits, parseUnits: SCAN_PARSE_UNITS } })
        .findings.map((f) => f.rule),
    ).toEqual(['dynamic-execution']);
    // the scan's budget, too: a file after the budget is spent is not parsed
    const spent = { units: 0 };
    scanner.scanFile('p.py', plain, { limits: { ...limits, parseUnits: SCAN_PARSE_UNITS, budgetUnits: 100 }, spent });
    expect(
      scanner.scanFile('q.py', 'eval(x)\n', { limits: { ...limits, budgetUnits: 100 }, spent }).unparsed?.reason,
    ).toBe(notParsed.budgetUnits(100));
  }, 60_000);

  it('a file whose parse runs past its limit is not parsed, and is listed with the rules it names and their severity, as the registry flags it', async () => {
    const dir = tempDir('nodereg-parse-limit-');
    writeTree(dir, { 'g.py': garbage(3, 1024 * 1024), 'ok.py': 'import os\nos.system(cmd)\n' });
    const files = ['g.py', 'ok.py'].map((path) => ({
      path,
      abs: join(dir, path),
      size: statSync(join(dir, path)).size,
    }));
    const started = Date.now();
    const report = await scanFiles(files, { threads: 1, limits: { parseMs: 500, budgetMs: 5_000 } });
    // 1 MiB of random brackets takes ~15 s to parse here
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(report.skipped).toEqual([
      { file: 'g.py', reason: notParsed.parse(500), rules: ['dynamic-execution'], severity: 'high' },
    ]);
    // the other file is scanned as usual, within the budget that is left
    expect(report.findings.map((finding) => `${finding.rule} ${finding.file}:${finding.line}`)).toEqual([
      'command-injection ok.py:2',
    ]);
  });
});
