// A file the resolution layer does not read is parsed only in the top-level statements that hold its
// rules' names (src/scan/statements.ts), its statements told from its text. A start read wrongly (inside
// a string, a bracket, a continued line) would hand the parser a piece of a statement: the starts must
// be a subset of the parser's own, and the findings those of the whole file's parse.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admittedRules, asRead, Scanner } from '../../src/scan/scanner.js';
import { statementRanges, statementStarts } from '../../src/scan/statements.js';

const scanner = await Scanner.load();

/** The parser's own top-level statement starts (comments are not statements), or undefined where it finds an error. */
function parserStarts(text: string): number[] | undefined {
  const tree = scanner.parsePython(text)!;
  try {
    if (tree.rootNode.hasError) return undefined;
    return [0, ...tree.rootNode.children.filter((c) => c?.type !== 'comment').map((c) => c!.startIndex)];
  } finally {
    tree.delete();
  }
}

const startsOf = (text: string) => statementStarts(text)?.map((at) => text.slice(at, at + 12).split('\n')[0]);
/** The findings of the whole file's parse: a file that holds `nodereg:` is read whole, for its suppressions. */
const whole = (text: string) => scanner.scanText('a.py', `${text}\n# nodereg:\n`);

describe('top-level statements told from the text', () => {
  it('a line at column 0 inside a string, brackets or a continued line is not a start', () => {
    const text = [
      'import sys, torch',
      's = """',
      'torch.load(p)',
      '"""',
      "t = ('a',",
      'torch.load(q))',
      'u = 1 + \\',
      'torch.load(r)',
      "v = f'{x}' # '''",
      'torch.load(w)',
      `j = f"{', '.join(f'{y!r}' for y in z)}"`,
      'torch.load(k)',
    ].join('\n');
    expect(startsOf(text)).toEqual([
      'import sys, ',
      's = """',
      "t = ('a',",
      'u = 1 + \\',
      "v = f'{x}' #",
      'torch.load(w',
      `j = f"{', '.`,
      'torch.load(k',
    ]);
  });

  it('decorators and the definition they decorate, and a compound statement with its clauses, are one statement', () => {
    const text =
      '@a\n# c\n@b(1)\ndef f():\n    pass\nif x:\n    y()\nelif z:\n    pass\nelse:\n    pass\ntry:\n    pass\nexcept E:\n    pass\nfinally:\n    pass\n';
    expect(startsOf(text)).toEqual(['@a', 'if x:', 'try:']);
  });

  it('gives no starts where it does not follow the text as Python does: an f-string field with a quote, an unclosed bracket, a backslash inside a line', () => {
    expect(statementStarts('x = f"{d["k"]}"\ny = 1\n')).toBeUndefined();
    expect(statementStarts('x = (1,\ny = 2\n')).toBeUndefined();
    expect(statementStarts('x = 1 \\ + 2\n')).toBeUndefined();
    expect(statementStarts("s = 'open\ny = 2\n")).toBeUndefined();
  });

  it('gives no starts where an f-string field holds a quote Python reads otherwise: in a format spec, or the outer quote inside a string', () => {
    for (const field of [`f"{a:'}"`, `f"{a!r:'}"`, `f"{a[1:2] + 'x'}"`, `f'{"a'b"}'`])
      expect(statementStarts(`x = ${field}\ny = 1\n`), field).toBeUndefined();
  });

  it('a payload hidden behind a quote in a format spec is still found (the file is parsed whole)', () => {
    const pad = Array.from({ length: 12 }, (_, i) => `pad${i} = ${i}`).join('\n');
    const text = `import torch\nx = 0 and f"{a:'}" + """'}"\n"""\nmodel = torch.load(input())  # """\n${pad}\n`;
    const findings = scanner.scanText('a.py', text).map((f) => `${f.rule}:${f.line}`);
    expect(findings).toEqual(['unsafe-deserialization:4']);
    expect(findings).toEqual(whole(text).map((f) => `${f.rule}:${f.line}`));
  });

  it('a file naming torch once is parsed in that statement alone, and found there', () => {
    const text = `import os\n${'def f(a):\n    return a\n\n'.repeat(50)}model = torch.load(path)\n${'x = 1\n'.repeat(100)}`;
    const at = text.indexOf('model');
    const ranges = statementRanges(asRead('python', text), admittedRules('a.py', text));
    expect(ranges?.map((r) => [r.startIndex, r.endIndex])).toEqual([[at, at + 'model = torch.load(path)\n'.length]]);
    const findings = scanner.scanText('a.py', text).map((f) => `${f.rule}:${f.line}`);
    expect(findings).toEqual(['unsafe-deserialization:152']);
    expect(findings).toEqual(whole(text).map((f) => `${f.rule}:${f.line}`));
  });

  it("on generated Python, every start it gives is one of the parser's, and the findings are the whole parse's", () => {
    const line = fc.constantFrom(
      'import sys, torch',
      'model = torch.load(path)',
      'sys.path.insert(0, here)',
      's = """\ntorch.load(a)\n"""',
      "t = '''x\n''' ; torch.load(b)",
      'u = (1,\ntorch.load(c))',
      'v = 1 + \\\n  torch.load(d)',
      "w = f'{a!r:>{n}}' + r'\\' + \"'\"",
      '# torch.load(e) "',
      '@dec\ndef f():\n    return torch.load(g)',
      'if a:\n    torch.load(h)\nelse:\n    pass',
      'class C:\n    x = [\n1]\n    y = torch.load(i)',
      'x = b\'\\x00\' if a else rb"\\""',
      `y = f"{', '.join(f'{v!r}' for v in w)}" + f'{d["k"]:>{n}}'`,
      '  ',
      '',
    );
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 40 }), (lines) => {
        const text = `${lines.join('\n')}\n`;
        const own = statementStarts(text);
        const real = parserStarts(text);
        if (own && real) expect(own.filter((at) => !real.includes(at))).toEqual([]);
        expect(scanner.scanText('a.py', text).map((f) => `${f.rule}:${f.line}:${f.column}`)).toEqual(
          whole(text).map((f) => `${f.rule}:${f.line}:${f.column}`),
        );
      }),
      { numRuns: 200, seed: 20261207 },
    );
  });
});
