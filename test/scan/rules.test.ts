// Every rule against its own examples (src/scan/rules/*.ts): the lines of a bad example that end
// with the comment `finding` are found, at that file and line, and nothing else of that rule; the
// good examples, which hold the same calls in a comment, a docstring and a string, give nothing.
// Then the same examples mixed into larger files (a file is queried only in the top-level statements
// that hold a rule's names), suppression comments, the registry's stricter reading of them, and what
// the scanner skips.
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SCAN_RULE_IDS } from '../../src/contract/limits.js';
import { rules } from '../../src/scan/rules/index.js';
import { encodedRun } from '../../src/scan/rules/obfuscation.js';
import { scanFiles } from '../../src/scan/run.js';
import { admittedRules, Scanner } from '../../src/scan/scanner.js';
import { tempDir } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';

const EXTENSION = { python: 'py', javascript: 'js' } as const;
/** Where an example is written: requirements files and .pth files are known by their names. */
const NAMES = { python: 'x.py', javascript: 'x.js', requirements: 'requirements.txt', pth: 'x.pth' } as const;
const fileOf = (rule: string, kind: string, language: string) =>
  `${rule}/${kind}/${NAMES[language as keyof typeof NAMES]}`;
const MARKER = /(#|\/\/) finding$/;

/** Lines (1-based) that end with the `finding` marker. */
const markedLines = (source: string) =>
  source.split('\n').flatMap((line, i) => (MARKER.test(line.trimEnd()) ? [i + 1] : []));

const scanner = await Scanner.load();

describe('rule examples', () => {
  it('every rule id of the contract has one rule file, and every rule has examples of both kinds', () => {
    expect(rules.map((r) => r.id).sort()).toEqual([...SCAN_RULE_IDS].sort());
    for (const rule of rules) {
      const languages = [...new Set([...Object.keys(rule.patterns), ...(rule.resolved ?? [])])];
      expect(Object.keys(rule.examples).sort(), rule.id).toEqual(languages.sort());
      for (const example of Object.values(rule.examples)) {
        expect(markedLines(example.bad).length, rule.id).toBeGreaterThan(0);
        expect(markedLines(example.good), rule.id).toEqual([]);
      }
    }
  });

  // One tree holding every example, scanned as `nodereg scan` does: findings carry the right file.
  const root = tempDir('nodereg-scan-examples-');
  const files: Record<string, string> = {};
  // The hints a rule's check gives a case of its own, by the line of its bad example.
  const SPECIFIC_HINTS: Record<string, (line: number) => string | undefined> = {
    'runtime-install': (line) =>
      line === 9
        ? "the host installs the node's requirements.txt itself (ComfyUI-Manager does, before it runs install.py): remove this call, or the whole install.py when installing is all it does, and keep the packages in requirements.txt (the manager installs that file; it does not read [project] dependencies)"
        : undefined,
  };
  for (const rule of rules) {
    for (const [language, example] of Object.entries(rule.examples)) {
      files[fileOf(rule.id, 'bad', language)] = example.bad;
      files[fileOf(rule.id, 'good', language)] = example.good;
    }
  }
  writeTree(root, files);
  const inputs = Object.entries(files).map(([path, text]) => ({
    path,
    abs: join(root, path),
    size: Buffer.byteLength(text),
  }));
  const report = scanFiles(inputs, { threads: 1 });

  for (const rule of rules) {
    for (const [language, example] of Object.entries(rule.examples)) {
      it(`${rule.id} (${language}): bad example found at its marked lines, good example not found`, async () => {
        const { findings } = await report;
        const lines = (file: string) => [
          ...new Set(findings.filter((f) => f.rule === rule.id && f.file === file).map((f) => f.line)),
        ];
        expect(lines(fileOf(rule.id, 'bad', language))).toEqual(markedLines(example.bad));
        expect(lines(fileOf(rule.id, 'good', language))).toEqual([]);
        for (const finding of findings.filter((f) => f.rule === rule.id)) {
          expect(finding.severity).toBe(rule.severity);
          // a rule's check may give a case of its own a plainer hint (runtime-install's `pip install -r`)
          expect(
            finding.hint === rule.hint || finding.hint === SPECIFIC_HINTS[finding.rule]?.(finding.line),
            `${finding.file}:${finding.line} ${finding.hint}`,
          ).toBe(true);
          expect(finding.column).toBeGreaterThan(0);
        }
      });
    }
  }

  it('no rule fires in another language: the Python examples saved as JavaScript give no Python finding', () => {
    const python = rules.filter((r) => r.examples.python && !r.examples.javascript);
    for (const rule of python) {
      expect(scanner.scanText('same.js', rule.examples.python!.bad).filter((f) => f.rule === rule.id)).toEqual([]);
    }
  });
});

// A file is queried, rule by rule, only in the top-level statements that hold the rule's `requires`.
// Many examples in one file, some inside a block, must each be found exactly as on their own: a finding
// in one statement, its rule's names in another, neighbours joined into one range.
describe('examples mixed into one file', () => {
  const WRAP = {
    python: [(s: string) => s, (s: string) => `class Holder:\n${indent(s)}`, (s: string) => `if True:\n${indent(s)}`],
    javascript: [(s: string) => s, (s: string) => `if (true) {\n${indent(s)}}\n`],
  } as const;
  const indent = (s: string) =>
    s
      .split('\n')
      .map((line) => (line ? `    ${line}` : line))
      .join('\n');

  for (const language of ['python', 'javascript'] as const) {
    // (not-fully-analysed is said of a whole file: past the bound, the layer reads no further in it)
    const blocks = rules
      .filter((rule) => rule.id !== 'not-fully-analysed')
      .flatMap((rule) =>
        Object.entries(rule.examples[language] ?? {}).map(([kind, source]) => ({
          rule: rule.id,
          kind,
          source: source.trimEnd() + '\n',
        })),
      );
    it(`${language}: every example's findings, at its own lines and none elsewhere, whatever surrounds it`, () => {
      const parts = fc.array(
        fc.record({ block: fc.nat(blocks.length - 1), wrap: fc.nat(WRAP[language].length - 1), gap: fc.nat(2) }),
        { minLength: 1, maxLength: 12 },
      );
      fc.assert(
        fc.property(parts, (chosen) => {
          let text = '';
          const placed: { rule: string; from: number; to: number; expected: number[] }[] = [];
          for (const { block, wrap, gap } of chosen) {
            const { rule, source } = blocks[block];
            const wrapped = WRAP[language][wrap](source) + '\n'.repeat(gap);
            const from = text.split('\n').length; // the block's first line, 1-based
            placed.push({
              rule,
              from,
              to: from + wrapped.split('\n').length - 1,
              expected: markedLines(wrapped).map((line) => line + from - 1),
            });
            text += wrapped;
          }
          const findings = scanner.scanText(`mixed.${EXTENSION[language]}`, text);
          for (const { rule, from, to, expected } of placed) {
            const lines = [
              ...new Set(findings.filter((f) => f.rule === rule && f.line >= from && f.line < to).map((f) => f.line)),
            ];
            expect(lines, `${rule} in lines ${from}–${to - 1} of:\n${text}`).toEqual(expected);
          }
        }),
        { numRuns: 40, seed: 20261125 },
      );
    });
  }
});

describe('suppression comments', () => {
  const code = (comment: string) =>
    `import os\n\ndef f(x):\n    ${comment}\n    eval(x)\n    os.system(x)  # nodereg: allow command-injection -- x is a fixed tool name\n`;

  it('a comment on the line or the line above, with a reason, suppresses the named rule only', () => {
    const findings = scanner.scanText(
      'a.py',
      code('# nodereg: allow dynamic-execution -- x comes from our own template'),
    );
    expect(findings.map((f) => [f.rule, f.line, f.suppressed, f.reason])).toEqual([
      ['dynamic-execution', 5, true, 'x comes from our own template'],
      ['command-injection', 6, true, 'x is a fixed tool name'],
    ]);
    const other = scanner.scanText('a.py', code('# nodereg: allow obfuscation -- not this rule'));
    expect(other.find((f) => f.rule === 'dynamic-execution')?.suppressed).toBeUndefined();
  });

  it('without a reason nothing is suppressed, and the hint says how to write one', () => {
    const [finding] = scanner.scanText('a.py', code('# nodereg: allow dynamic-execution'));
    expect(finding.suppressed).toBeUndefined();
    expect(finding.hint).toContain('-- why it is safe');
  });

  it('two lines above is too far; a string that looks like the comment is not one', () => {
    const far = scanner.scanText('a.py', 'import os\n# nodereg: allow dynamic-execution -- far\n\neval(x)\n');
    expect(far[0].suppressed).toBeUndefined();
    const text = scanner.scanText('a.py', 'y = "# nodereg: allow dynamic-execution -- in a string"; eval(x)\n');
    expect(text[0].suppressed).toBeUndefined();
  });

  it('on the registry a high finding stays unsuppressed; the reason is kept for the admin', () => {
    const findings = scanner.scanText('a.py', code('# nodereg: allow dynamic-execution -- trusted'), { server: true });
    expect(findings.map((f) => [f.rule, f.suppressed, f.reason])).toEqual([
      ['dynamic-execution', undefined, 'trusted'],
      ['command-injection', undefined, 'x is a fixed tool name'],
    ]);
    const medium = scanner.scanText(
      'b.py',
      'import sys\nsys.path.append(x)  # nodereg: allow environment-manipulation -- our vendored dir\n',
      { server: true },
    );
    expect(medium[0]).toMatchObject({ rule: 'environment-manipulation', suppressed: true });
  });

  it('JavaScript takes // comments', () => {
    const [finding] = scanner.scanText(
      'web/a.js',
      'eval(code); // nodereg: allow js-dynamic-execution -- plugin sandbox\n',
    );
    expect(finding).toMatchObject({ suppressed: true, reason: 'plugin sandbox' });
  });
});

// Each rule's `requires` as the scanner reads it: the names of all rules in one pass, whole words only;
// other text and a rule's own search beside them.
describe('requires', () => {
  it('every name is an identifier, so that all of them can be one regular expression', () => {
    for (const rule of rules) for (const name of rule.requires.names ?? []) expect(name, rule.id).toMatch(/^\w+$/);
  });

  it('admits a rule for a name as a whole word only, or for its other text', () => {
    const admitted = (text: string) =>
      admittedRules('a.py', text)
        .map((a) => a.rule.id)
        .sort();
    expect(admitted('evaluate(x); my_exec = 1; sys_path = 2\n')).toEqual([]);
    expect(admitted('import sys\n')).toEqual(['environment-manipulation']);
    expect(admitted('p = "/usr/lib/python3/site-packages"\n')).toEqual(['environment-manipulation']);
    // obfuscation holds a decoder in every match: eval alone does not admit it
    expect(admitted('eval(x)\n')).toEqual(['dynamic-execution']);
    expect(admitted('exec(zlib.decompress(p))\n')).toEqual(['dynamic-execution', 'obfuscation']);
    expect(admitted(`x = "${'QUJD'.repeat(300)}"\n`)).toEqual(['obfuscation']);
    expect(admitted('u = "stratum+TCP://pool.example.invalid:1"\n')).toEqual(['prohibited-string']);
  });

  it("a rule's places from names, text and its own search, in order: every statement that holds one is queried", () => {
    // obfuscation: names (the decoders) in many statements, its own search (long runs) in between
    const blob = 'QUJD'.repeat(300);
    const parts: string[] = [];
    for (let i = 0; i < 30; i++)
      parts.push(
        i % 10 === 5
          ? `B${i} = "${blob}"\n`
          : i % 7 === 3
            ? `exec(base64.b64decode(p${i}))\n`
            : `compile_${i} = eval_${i} = ${i}\n`,
      );
    const text = `import base64\n${parts.join('')}`;
    const lines = scanner
      .scanText('a.py', text)
      .filter((f) => f.rule === 'obfuscation')
      .map((f) => f.line);
    const expected = parts.flatMap((part, i) => (i % 10 === 5 || i % 7 === 3 ? [i + 2] : []));
    expect(lines).toEqual(expected);
    // environment-manipulation: names and text, each statement found whichever holds it
    const env =
      'import os\nh = open("/usr/lib/site-packages/x.pth", "w")\nsys.path.append(a)\nx = 1\nsite.addsitedir("/opt")\nos.environ["A"] = "1"\n';
    expect(
      scanner
        .scanText('b.py', env)
        .filter((f) => f.rule === 'environment-manipulation')
        .map((f) => f.line),
    ).toEqual([2, 3, 5, 6]);
  });
});

describe('what is scanned', () => {
  it("only Python and JavaScript files; a file over the size limit is read for the rules' names: listed as skipped, with them and the most severe one's severity, when it names any", async () => {
    const pad = '#'.repeat(5 * 1024 * 1024);
    const root = writeTree(tempDir(), {
      'notes.txt': 'eval(x)\n',
      'big.py': `x = 1\n${pad}\n`,
      'env.py': `sys.path.append(p)\n${pad}\n`,
      'risky.py': `os.system(cmd)\n${pad}\n`,
      'ok.py': 'eval(x)\n',
    });
    const inputs = ['notes.txt', 'big.py', 'env.py', 'risky.py', 'ok.py'].map((path) => ({
      path,
      abs: join(root, path),
      size: path.startsWith('o') || path.startsWith('n') ? 8 : 5 * 1024 * 1024 + 20,
    }));
    const report = await scanFiles(inputs, { threads: 1 });
    expect(report.findings.map((f) => f.file)).toEqual(['ok.py']);
    expect(report.skipped).toEqual([
      {
        file: 'env.py',
        reason: expect.stringContaining('over the limit'),
        rules: ['environment-manipulation'],
        severity: 'medium',
      },
      {
        file: 'risky.py',
        reason: expect.stringContaining('over the limit'),
        rules: ['dynamic-execution', 'command-injection'],
        severity: 'high',
      },
    ]);
    expect(report.files).toBe(5);
  });

  it('split across worker threads, the report is the same as in one thread', async () => {
    const root = tempDir();
    const files: Record<string, string> = {};
    // ~1.5 MiB of source, so that two workers are used
    for (let i = 0; i < 30; i++)
      files[`m${i}.py`] = `import os\n${'x = [1, 2, 3]\n'.repeat(4000)}os.system(cmd_${i})\n`;
    writeTree(root, files);
    const inputs = Object.entries(files).map(([path, text]) => ({ path, abs: join(root, path), size: text.length }));
    const one = await scanFiles(inputs, { threads: 1 });
    const two = await scanFiles(inputs, { threads: 2 });
    expect(two).toEqual(one);
    expect(one.findings).toHaveLength(30);
  }, 120_000);
});

describe('deep nesting', () => {
  // The rules' own walks of the tree recursed, past the JavaScript stack from ~10,000 levels ("Maximum
  // call stack size exceeded": a crashed scan worker on the registry, a raw error from validate and publish).
  const nested = (depth: number, open: string, inner: string, close: string) =>
    `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
  // (the resolution layer follows 200 levels and reports the rest as an info finding: the rules read on)
  const found = (file: string, text: string) =>
    scanner
      .scanText(file, text)
      .filter((f) => f.severity !== 'info')
      .map((f) => `${f.rule}:${f.line}`);

  it('a call whose argument nests 120,000 levels deep is read to the bottom, as a shallow one is', () => {
    expect(found('deep.py', `eval(${nested(120_000, '[', '', ']')})\n`)).toEqual(['dynamic-execution:1']);
    expect(
      scanner
        .scanText('deep.py', `eval(${nested(1_000, '[', '', ']')})\n`)
        .filter((f) => f.severity === 'info')
        .map((f) => `${f.rule}:${f.line}`),
    ).toEqual(['not-fully-analysed:1']);
    // a constant, however deeply parenthesized, is not code computed at run time
    expect(found('deep.py', `eval(${nested(30_000, '(', '"1 + 1"', ')')})\n`)).toEqual([]);
    // the decoder at the bottom is found
    expect(found('deep.py', `import base64\nexec(${nested(30_000, '(', 'base64.b64decode(payload)', ')')})\n`)).toEqual(
      ['dynamic-execution:2', 'obfuscation:2'],
    );
    // every string below the call is read: the rm -rf at the bottom
    expect(
      found('deep.py', `import subprocess\nsubprocess.run(${nested(30_000, '[', '"rm -rf /"', ']')}, shell=True)\n`),
    ).toEqual(['command-injection:2', 'destructive-fs:2']);
    expect(found('deep.js', `eval(${nested(30_000, '(', 'code', ')')});\n`)).toEqual(['js-dynamic-execution:1']);
  }, 120_000);

  it('a network call 30,000 brackets deep is placed (inside a function, under the main guard, or at import) in one walk, not one per level', () => {
    // Walking up through `parent` found each parent from the root again: 16,000 levels took 13 s, 30,000 about 45 s.
    const started = performance.now();
    const call = nested(30_000, '[', 'requests.get(url)', ']');
    expect(found('deep.py', `import requests\nx = ${call}\n`)).toEqual(['network-at-import:2']);
    expect(found('deep.py', `import requests\ndef load():\n    return ${call}\n`)).toEqual([]);
    expect(found('deep.py', `import requests\nif __name__ == "__main__":\n    x = ${call}\n`)).toEqual([]);
    // A bound with a wide margin: the walk up took minutes here, the walk down well under a second.
    expect(performance.now() - started).toBeLessThan(20_000);
  }, 120_000);
});

describe('long encoded runs (obfuscation)', () => {
  // the expression the rule used: the same first run, whole, as encodedRun finds in one pass
  const EXPRESSION = /[A-Za-z0-9+/_=-]{1024,}|(?:\\x[0-9a-fA-F]{2}){256,}/;
  it('encodedRun finds what the expression finds, at the same place', () => {
    const piece = fc.oneof(
      fc.constantFrom('a', 'Z', '9', '+', '=', '-', ' ', '\n', '\\', 'x', '\\x4', '\\x41', '\\xg1', '.'),
      fc
        .tuple(fc.constantFrom('a', '\\x41', 'x41'), fc.constantFrom(255, 256, 300, 1023, 1024, 1100))
        .map(([unit, n]) => unit.repeat(n)),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        const expected = EXPRESSION.exec(text);
        expect(encodedRun(text)).toEqual(expected ? { index: expected.index, text: expected[0] } : undefined);
      }),
      { numRuns: 2000, seed: 1125 },
    );
  });
});
