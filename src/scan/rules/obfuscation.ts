import type { Node } from 'web-tree-sitter';
import { defineRule, isDocstring, namedDescendants } from '../rule.js';

/** Calls that turn encoded data back into bytes or text. */
const DECODERS = new Set([
  'b64decode',
  'b32decode',
  'b16decode',
  'b85decode',
  'a85decode',
  'urlsafe_b64decode',
  'decodebytes',
  'decodestring',
  'decompress',
  'fromhex',
  'unhexlify',
  'a2b_base64',
  'a2b_hex',
  'loads',
]);
/** `codecs.decode(x, "rot13")` and friends: `decode` counts only on these objects. */
const DECODE_OBJECTS = new Set(['codecs', 'marshal', 'zlib', 'lzma', 'bz2', 'gzip', 'base64', 'binascii']);
const LONG_LITERAL = 1024;
/**
 * Base64 (standard or URL-safe) or hex, unbroken, LONG_LITERAL characters or more, each tried only
 * where a run starts (the lookbehind): `[…]{1024,}` alone read a run of just under 1,024 characters
 * again from each of its characters (quadratic: one long line of them would hold the registry's event
 * loop); so each character is read about once.
 */
const RUNS = [
  new RegExp(`(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_=-]{${LONG_LITERAL},}`),
  new RegExp(`(?<!\\\\x[0-9a-fA-F]{2})(?:\\\\x[0-9a-fA-F]{2}){${LONG_LITERAL / 4},}`),
];

/** The first long encoded run in `text`, whole. */
export function encodedRun(text: string): { index: number; text: string } | undefined {
  let first: RegExpExecArray | null = null;
  for (const pattern of RUNS) {
    const run = pattern.exec(text);
    if (run && (!first || run.index < first.index)) first = run;
  }
  return first ? { index: first.index, text: first[0] } : undefined;
}

/**
 * Where the first long encoded run starts at or after `from` (-1: none). A run never spans lines, so
 * only lines of LONG_LITERAL characters or more are searched: a search over the whole text reads
 * every short run of letters many times over, which is slow on any file of ordinary size.
 */
function encodedRunFrom(text: string, from: number): number {
  for (let start = from; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end - start >= LONG_LITERAL) {
      const run = encodedRun(text.slice(start, end));
      if (run) return start + run.index;
    }
    start = end + 1;
  }
  return -1;
}

/** The first decoding call inside `node`, if any. */
function decoderIn(node: Node): string | undefined {
  for (const n of namedDescendants(node)) {
    if (n.type !== 'call') continue;
    const fn = n.childForFieldName('function');
    const name = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
    const object = fn?.type === 'attribute' ? fn.childForFieldName('object')?.text : undefined;
    if (name && (DECODERS.has(name) || (name === 'decode' && object && DECODE_OBJECTS.has(object)))) {
      if (name !== 'loads' || object === 'marshal') return fn!.text;
    }
  }
  return undefined;
}

/** PEP 263: the source encoding, declared in a comment on line 1 or 2. */
const CODING = /^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)/;
/**
 * Encodings in which ASCII text reads as ASCII, so the scan (which reads UTF-8) sees the code as Python
 * runs it. Another (utf-7, unicode_escape, utf-16, rot13 …) can make `+AGU-val(x)` call eval.
 */
const ASCII_SAFE =
  /^(?:utf-?8(?:-sig)?|ascii|us-ascii|latin-?1|iso-?8859-?\d+|l\d|cp-?\d+|windows-\d+|gb(?:k|2312|18030)|big5(?:hkscs)?|shift-?jis|sjis|cp932|euc-?(?:jp|kr|cn)|koi8-?[ru])$/;

/** Where a `coding` declaration may be, on line 1 or 2, at or after `from` (-1: none); only those lines are read. */
function codingFrom(text: string, from: number): number {
  const first = text.indexOf('\n');
  const second = first < 0 ? -1 : text.indexOf('\n', first + 1);
  const at = text.slice(0, second < 0 ? text.length : second).search(/coding[:=]/);
  return at >= from ? at : -1;
}

export default defineRule({
  id: 'obfuscation',
  severity: 'high',
  description:
    'Decoded data (base64, zlib, marshal, codecs, hex) that reaches eval/exec/compile, or a long encoded literal (1,024 characters or more in one run): code hidden from readers.',
  hint: 'ship the code as readable source; keep data in data files',
  // the decoder's name, not eval's: every match holds one, and a file of eval calls without any is not queried for it
  requires: {
    names: [...DECODERS, 'decode'],
    find: (text, from) => {
      const [coding, run] = [codingFrom(text, from), encodedRunFrom(text, from)];
      return coding < 0 || (run >= 0 && run < coding) ? run : coding;
    },
  },
  patterns: {
    python: `
((call function: (identifier) @name arguments: (argument_list . (_) @arg)) @finding
 (#any-of? @name "eval" "exec" "compile"))
((string) @finding @literal)
((comment) @finding @coding)`,
  },
  check: ({ name, arg, literal, coding }) => {
    if (coding) {
      const declared = coding.startPosition.row < 2 ? CODING.exec(coding.text)?.[1] : undefined;
      return declared && !ASCII_SAFE.test(declared.toLowerCase().replace(/_/g, '-'))
        ? `the file declares the source encoding ${declared.slice(0, 40)}: its code is not what it reads as`
        : undefined;
    }
    if (literal) {
      if (literal.endIndex - literal.startIndex < LONG_LITERAL || isDocstring(literal)) return undefined;
      // each part on its own (an f-string's parts are apart in the text): a run is one stretch of the text, as `requires` finds it
      const run = literal.namedChildren
        .map((c) => (c?.type === 'string_content' ? encodedRun(c.text) : undefined))
        .find(Boolean);
      return run ? `a literal holding ${run.text.length} encoded characters in one run` : undefined;
    }
    const decoder = decoderIn(arg);
    return decoder ? `${name.text}() of data decoded by ${decoder}()` : undefined;
  },
  examples: {
    python: {
      bad: `import base64, codecs, marshal, zlib

def load(payload):
    exec(base64.b64decode(payload))  # finding
    exec(zlib.decompress(base64.b64decode(payload)).decode())  # finding
    eval(codecs.decode(payload, "rot13"))  # finding
    exec(marshal.loads(payload))  # finding

BLOB = "${'QUJD'.repeat(300)}"  # finding
`,
      good: `# -*- coding: utf-8 -*-
import base64, json
"""Never exec(base64.b64decode(payload))."""

def load(payload):
    # exec(base64.b64decode(payload))
    text = "exec(base64.b64decode(payload))"
    data = json.loads(base64.b64decode(payload))
    icon = base64.b64decode("aGVsbG8=")
    return data, icon, text
`,
    },
  },
});
