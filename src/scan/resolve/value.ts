// What the resolution layer knows of an expression without running it: a constant string (folded from
// concatenation, join, format, chr, hex, rot13, base64 of literals), a module or one of its members by
// its full name, a list or dict of such values, a function of the module, or nothing (unknown).
import type { Node } from 'web-tree-sitter';

/** Stands for a part of a string that is not known. */
export const UNKNOWN_PART = '\u0000';
/** A path under the node's own directory (from __file__) or a temp dir it made, as a string's start. */
export const OWN = '\u0001own';
/** A site-packages directory computed at run time (site.getsitepackages()). */
export const SITE = '\u0001site';

export type Value =
  | { k: 'str'; v: string }
  | { k: 'num'; v: number }
  | { k: 'ref'; path: string }
  | { k: 'list'; items: Value[] }
  | { k: 'dict'; entries: Map<string, Value> }
  /** A namespace read as a dict: globals(), vars(module), module.__dict__. `path` '' is this module. */
  | { k: 'ns'; path: string }
  | { k: 'func'; fn: FunctionInfo }
  | { k: 'lambda'; node: Node }
  | { k: 'bound'; self: Value; name: string }
  | { k: 'methodcaller'; name: string; args: Value[] }
  | { k: 'attrgetter'; name: string }
  | { k: 'instance'; of: string }
  /** A file opened (`open(path)`), and the text read from one. */
  | { k: 'file'; path: string }
  | { k: 'filetext'; path: string }
  /** A parameter of the function being summarised. */
  | { k: 'param'; index: number; name: string }
  | { k: 'unknown' };

/** What a function of the module does with its parameters, found once per function. */
export interface FunctionInfo {
  name: string;
  node: Node;
  params: string[];
  /** Sinks it passes a parameter to: the sink's full name and the arguments it passes (parameters as `param`). */
  sinks: { path: string; args: Value[]; kw: Map<string, Value>; at: string }[];
  returns?: Value;
  state: 'new' | 'walking' | 'done';
  /** The module that defines it (another of the package's, for an imported helper). */
  owner: { walkFunction(fn: FunctionInfo): void };
}

export const UNKNOWN: Value = { k: 'unknown' };
export const str = (v: string): Value => ({ k: 'str', v });
export const ref = (path: string): Value => ({ k: 'ref', path });

/** The string a value folds to, with UNKNOWN_PART for what is not known; undefined when it is no string. */
export function asText(value: Value): string | undefined {
  switch (value.k) {
    case 'str':
      return value.v;
    case 'param':
    case 'unknown':
    case 'filetext':
      return UNKNOWN_PART;
    case 'ref':
      return value.path === 'sys.executable' ? 'python' : UNKNOWN_PART;
    default:
      return undefined;
  }
}

/** The string when every part of it is known. */
export function constant(value: Value | undefined): string | undefined {
  return value?.k === 'str' && !value.v.includes(UNKNOWN_PART) ? value.v : undefined;
}

/** A command line: a list's items (or a string) as text, unknown parts marked. */
export function commandText(value: Value): string {
  if (value.k === 'list') return value.items.map((item) => asText(item) ?? UNKNOWN_PART).join(' ');
  return asText(value) ?? UNKNOWN_PART;
}

/** True when the value is, or holds, a parameter of the function being summarised. */
export function holdsParam(value: Value): boolean {
  if (value.k === 'param') return true;
  if (value.k === 'list') return value.items.some(holdsParam);
  return false;
}

/** The value with each parameter replaced by the argument given for it at a call site. */
export function substitute(value: Value, args: Value[]): Value {
  if (value.k === 'param') return args[value.index] ?? UNKNOWN;
  if (value.k === 'list') return { k: 'list', items: value.items.map((item) => substitute(item, args)) };
  return value;
}

export function concat(a: Value, b: Value): Value {
  if (a.k === 'list' && b.k === 'list') return { k: 'list', items: [...a.items, ...b.items] };
  const [x, y] = [asText(a), asText(b)];
  return x !== undefined && y !== undefined && (a.k === 'str' || b.k === 'str') ? str(x + y) : UNKNOWN;
}

/** `os.path.join` and `Path / part`: an absolute part starts again. */
export function joinPath(parts: Value[]): Value {
  let out = '';
  for (const part of parts) {
    const text = asText(part) ?? UNKNOWN_PART;
    out =
      text.startsWith('/') || text.startsWith(OWN) || text.startsWith(SITE) || /^[A-Za-z]:[\\/]/.test(text) || !out
        ? text
        : `${out.replace(/[\\/]$/, '')}/${text}`;
  }
  return str(out);
}

/** Python's escapes in a string literal's text (enough for names and commands). */
export function unescape(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[0-7]{1,3}|.)/g, (all, esc: string) => {
    if (esc[0] === 'x' || esc[0] === 'u') return String.fromCharCode(parseInt(esc.slice(1), 16));
    if (/^[0-7]/.test(esc)) return String.fromCharCode(parseInt(esc, 8));
    return (
      ({ n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '\n': '' } as Record<string, string>)[esc] ?? all
    );
  });
}

export function rot13(text: string): string {
  return text.replace(/[a-zA-Z]/g, (c) => {
    const base = c <= 'Z' ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base);
  });
}

/** base64, base32, base16 and hex of a literal, as latin-1 text; undefined when it does not decode. */
export function decodeLiteral(how: string, text: string): string | undefined {
  try {
    if (/b64decode|decodebytes|a2b_base64/.test(how))
      return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1');
    if (/b16decode|unhexlify|fromhex|a2b_hex/.test(how))
      return /^(?:[0-9a-fA-F]{2}\s*)*$/.test(text)
        ? Buffer.from(text.replace(/\s/g, ''), 'hex').toString('latin1')
        : undefined;
    if (/b32decode/.test(how)) return base32(text);
  } catch {
    return undefined;
  }
  return undefined;
}

function base32(text: string): string | undefined {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of text.replace(/=+$/, '')) {
    const i = alphabet.indexOf(c.toUpperCase());
    if (i < 0) return undefined;
    bits += i.toString(2).padStart(5, '0');
  }
  let out = '';
  for (let i = 0; i + 8 <= bits.length; i += 8) out += String.fromCharCode(parseInt(bits.slice(i, i + 8), 2));
  return out;
}

/** `"{} {name}".format(a, name=b)`: fields replaced in order or by name; unknown ones marked. */
export function format(template: string, args: Value[], kw: Map<string, Value>): string {
  let next = 0;
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (all, field: string | undefined) => {
    if (field === undefined) return all[0];
    const key = field.split(/[!:]/)[0];
    const value = key === '' ? args[next++] : /^\d+$/.test(key) ? args[Number(key)] : kw.get(key);
    return (value && asText(value)) ?? UNKNOWN_PART;
  });
}
