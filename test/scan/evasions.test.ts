// An attacker's ways past the rules that cost a line each to write: the scan reads the file as Python
// does (a lone CR ends a line, identifiers are NFKC-normalized), follows module aliases, and finds a
// risky call reached by getattr, through an import call, or imported or bound under another name.
// Each of these passed unflagged before (docs/decisions.md lists what the scan does not try to catch).
import { describe, expect, it } from 'vitest';
import { admittedRules, asRead, Scanner } from '../../src/scan/scanner.js';

const scanner = await Scanner.load();
const found = (text: string, file = 'a.py') => scanner.scanText(file, text).map((f) => `${f.rule}:${f.line}`);

describe('the file as Python reads it', () => {
  it('a lone CR ends a line: the call after a comment and a CR is code (the grammar read it as part of the comment)', () => {
    expect(found('# setup\reval(payload)\n')).toEqual(['dynamic-execution:2']);
    expect(found('import os\ros.system(cmd)\r')).toEqual(['command-injection:2']);
    expect(found('import os\r\nos.system(cmd)\r\n')).toEqual(['command-injection:2']);
    expect(found('// note\reval(code);\n', 'a.js')).toEqual(['js-dynamic-execution:2']);
  });

  it('identifiers are NFKC-normalized: fullwidth ｅｖａｌ and os.ｓｙｓｔｅｍ are eval and os.system', () => {
    expect(found('ｅｖａｌ(payload)\n')).toEqual(['dynamic-execution:1']);
    expect(found('import os\nos.ｓｙｓｔｅｍ(cmd)\n')).toEqual(['command-injection:2']);
    // a fullwidth quote inside a string stays in the string: normalizing it would have closed the string early
    expect(asRead('python', 's = "＂＂＂"\nｅｖａｌ(x)\n')).toBe('s = "＂＂＂"\neval(x)\n');
    expect(found('s = "＂＂＂"\nｅｖａｌ(x)\n')).toEqual(['dynamic-execution:2']);
    // text without such characters is left as it is, and a comment in another script too
    expect(asRead('python', '# 缩放图像\nx = 1\n')).toBe('# 缩放图像\nx = 1\n');
  });

  it('a source encoding in which ASCII does not read as ASCII (utf-7: `+AGU-val` is eval) is a finding; utf-8, latin-1, gbk are not', () => {
    expect(found('# coding: utf-7\n+AGU-val(payload)\n')).toEqual(['obfuscation:1']);
    expect(found('#!/usr/bin/env python\n# -*- coding: unicode_escape -*-\nx = 1\n')).toEqual(['obfuscation:2']);
    for (const coding of ['utf-8', 'latin-1', 'gbk', 'cp1252', 'iso-8859-15'])
      expect(found(`# -*- coding: ${coding} -*-\nx = 1\n`)).toEqual([]);
    // only lines 1 and 2 declare it
    expect(found('x = 1\ny = 2\n# coding: utf-7\n')).toEqual([]);
  });
});

describe('aliases and indirect calls', () => {
  it('a module imported under another name is followed, in the gate and the queries', () => {
    expect(found('import os as o\no.system(cmd)\n')).toEqual(['command-injection:2']);
    expect(found('import sys, os as o, subprocess as sp\no.popen(cmd)\nsp.run(cmd, shell=True)\n')).toEqual([
      'command-injection:2',
      'command-injection:3',
    ]);
    expect(found('import marshal as m\ncode = m.loads(blob)\n')).toEqual(['bytecode-manipulation:2']);
    expect(found('import pickle as pk\nstate = pk.loads(blob)\n')).toEqual(['unsafe-deserialization:2']);
    expect(admittedRules('a.py', 'import pickle as pk\nstate = pk.loads(blob)\n').map((a) => a.rule.id)).toContain(
      'unsafe-deserialization',
    );
    // a safe call through an alias of a module whose check reads its name is not made a finding
    expect(found('import torch as T\nmodel = T.load(p, weights_only=True)\n')).toEqual([]);
    expect(found('import subprocess as sp\nsp.run(["ls", path])\n')).toEqual([]);
  });

  it('getattr with a computed name, __import__, importlib, from-imports and bound names', () => {
    expect(found('import builtins\ngetattr(builtins, "ex" + "ec")(src)\n')).toEqual(['dynamic-execution:2']);
    // the resolution layer names what the call is: a shell command
    expect(found('import os\ngetattr(os, "system")(cmd)\n')).toEqual(['command-injection:2']);
    expect(found('__import__("os").system(cmd)\n')).toEqual(['command-injection:1']);
    expect(found('import importlib\nimportlib.import_module("subprocess").getoutput(cmd)\n')).toEqual([
      'command-injection:2',
    ]);
    // an import or a binding is not a finding; the call through it is
    expect(found('from os import system as s\ns(cmd)\n')).toEqual(['command-injection:2']);
    expect(found('run = exec\nrun(src)\n')).toEqual(['dynamic-execution:2']);
    expect(found('import base64\nexec(compile(base64.b64decode(p), "x", "exec"))\n')).toEqual([
      'dynamic-execution:2',
      'obfuscation:2',
      'dynamic-execution:2',
      'obfuscation:2',
    ]);
    // what nodes write every day is not a finding
    expect(
      found(
        'import importlib, os\nfrom subprocess import run\nh = getattr(self, name)\nsep = getattr(os, "sep")\nm = importlib.import_module(f".{name}", __name__)\n',
      ),
    ).toEqual([]);
  });
});
