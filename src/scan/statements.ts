// Where a Python file's top-level statements start, read from its text without the parser, so that a
// file whose rules' names stand in a few statements is parsed in those statements only (the rules'
// queries read nothing else: pieces.ts). Conservative: a line is a start only where the tokens before
// it are sure to be closed; anything this reading does not follow as Python does gives no starts, and
// the file is parsed whole.
import type { Range } from 'web-tree-sitter';
import type { Admitted } from './gate.js';

const NEWLINE = 10;
const BACKSLASH = 92;
const HASH = 35;
const AT = 64;
const OPENING = new Set([40, 91, 123]); // ( [ {
const CLOSING = new Set([41, 93, 125]);
/** What can open or close a string, bracket, comment or line. */
const INTERESTING = /[\n#\\'"()[\]{}]/g;
/** Inside a string: what can end it, escape, break a line or open an f-string's field. */
const DOUBLE_STOPS = /["\\\n{]/g;
const SINGLE_STOPS = /['\\\n{]/g;
const isQuote = (c: number) => c === 34 || c === 39;
const isWordCode = (c: number) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c > 127;
/** String prefixes (any case); `t` for template strings. */
const PREFIX = /^(?:[rubf]|[tf]r|r[tfb]|br|t)$/i;
/** Clauses of a compound statement, written at the column of the statement they continue. */
const CLAUSE = /^(?:else|elif|except|finally)(?![\p{XID_Continue}])/u;

/**
 * The end of the string starting at `at` (its opening quote) with this prefix, or -1 where the
 * reading gives up: a single-quoted string across a line break, or an f-string field holding its own
 * string's quote, a comment, a backslash or a line break (Python 3.12 reads those, older grammars do not).
 */
function stringEnd(text: string, at: number, prefix: string): number {
  const quote = text.charCodeAt(at);
  const triple = text.charCodeAt(at + 1) === quote && text.charCodeAt(at + 2) === quote;
  const formatted = /[ft]/i.test(prefix);
  const stops = quote === 34 ? DOUBLE_STOPS : SINGLE_STOPS;
  let i = at + (triple ? 3 : 1);
  while (i < text.length) {
    stops.lastIndex = i;
    if (!stops.test(text)) return -1;
    i = stops.lastIndex - 1;
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) {
      // `\{` in an f-string: an escape to some readers, a field after a backslash to others
      if (formatted && (text.charCodeAt(i + 1) === 123 || text.charCodeAt(i + 1) === 125)) return -1;
      i += 2;
    } else if (c === quote) {
      if (!triple) return i + 1;
      if (text.charCodeAt(i + 1) === quote && text.charCodeAt(i + 2) === quote) return i + 3;
      i++;
    } else if (c === NEWLINE) {
      if (!triple) return -1;
      i++;
    } else if (formatted) {
      if (text.charCodeAt(i + 1) === 123) i += 2;
      else if ((i = fieldEnd(text, i, quote)) < 0) return -1;
    } else i++;
  }
  return -1;
}

/**
 * After the `}` closing the f-string field at `at` of a string quoted with `quote`, or -1 (see
 * stringEnd). A string in the field quoted otherwise is read as one; the same quote is not followed,
 * neither inside such a string (older Pythons end the f-string there) nor after the field's `:` or `!`
 * (in a format spec a quote is a plain character to Python).
 */
function fieldEnd(text: string, at: number, quote: number): number {
  let depth = 0;
  let spec = false;
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === quote || c === HASH || c === BACKSLASH || c === NEWLINE) return -1;
    if (isQuote(c)) {
      if (spec) return -1;
      let p = i;
      while (p > at && isWordCode(text.charCodeAt(p - 1))) p--;
      const prefix = text.slice(p, i);
      const end = stringEnd(text, i, PREFIX.test(prefix) ? prefix : '');
      if (end < 0 || text.slice(i, end).includes(String.fromCharCode(quote))) return -1;
      i = end - 1;
    } else if (c === 123) depth++;
    else if (c === 125 && --depth === 0) return i + 1;
    else if (depth === 1 && (c === 58 || c === 33)) spec = true; // `:` or `!`, or one inside brackets: read as a spec
  }
  return -1;
}

/** Whether the line at `at` starts a top-level statement: at column 0, not a clause of the one before. */
function lineStart(text: string, at: number): 'start' | 'decorator' | 'other' {
  const c = text.charCodeAt(at);
  if (c === AT) return 'decorator';
  if (!isWordCode(c) && !isQuote(c) && !OPENING.has(c) && c !== 46 /* . */ && c !== 45 /* - */ && c !== 126 /* ~ */)
    return 'other';
  return CLAUSE.test(text.slice(at, at + 9)) ? 'other' : 'start';
}

/**
 * The index where each top-level statement of `text` (Python, as read: asRead) starts, in order, the
 * first at 0; undefined where the text holds what this reading does not follow (see the file's head).
 */
export function statementStarts(text: string): number[] | undefined {
  const starts = [0];
  let depth = 0;
  let decorated = false;
  let atLine = true;
  for (let i = 0; i < text.length; ) {
    if (atLine) {
      atLine = false;
      const kind = depth === 0 ? lineStart(text, i) : 'other';
      // decorators and the definition they decorate are one statement
      if (kind !== 'other') {
        if (!decorated && i > 0) starts.push(i);
        decorated = kind === 'decorator';
      }
    }
    // to the next character that can change the reading (most of a line is none)
    INTERESTING.lastIndex = i;
    if (!INTERESTING.test(text)) break;
    i = INTERESTING.lastIndex - 1;
    const c = text.charCodeAt(i);
    if (c === NEWLINE) {
      atLine = depth === 0;
      i++;
    } else if (c === HASH) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (c === BACKSLASH) {
      // a line continued: the next line is part of this one
      if (text.charCodeAt(i + 1) === NEWLINE) i += 2;
      else if (text.charCodeAt(i + 1) === 13 && text.charCodeAt(i + 2) === NEWLINE) i += 3;
      else return undefined;
    } else if (isQuote(c)) {
      let p = i;
      while (p > 0 && isWordCode(text.charCodeAt(p - 1))) p--;
      const prefix = text.slice(p, i);
      if ((i = stringEnd(text, i, PREFIX.test(prefix) ? prefix : '')) < 0) return undefined;
    } else {
      if (OPENING.has(c)) depth++;
      else if (CLOSING.has(c) && --depth < 0) return undefined;
      i++;
    }
  }
  return depth === 0 ? starts : undefined;
}

/** The row and column (0) of the line starting at `at`, counting line breaks from a known row. */
function rowAt(text: string, at: number, from: { index: number; row: number }): number {
  let row = from.row;
  for (let i = text.indexOf('\n', from.index); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) row++;
  from.index = at;
  from.row = row;
  return row;
}

/**
 * The ranges of whole top-level statements that hold a place of an admitted rule, merged, for a parse
 * of those alone; undefined when they would not save the parse of at least half the text, or when
 * the statements cannot be told (statementStarts).
 */
export function statementRanges(text: string, admitted: Admitted[]): Range[] | undefined {
  const starts = statementStarts(text);
  if (!starts) return undefined;
  const spans: [number, number][] = [];
  for (const { next } of admitted) {
    let s = 0;
    for (let at = next(0); at >= 0; ) {
      while (s + 1 < starts.length && starts[s + 1] <= at) s++;
      const end = s + 1 < starts.length ? starts[s + 1] : text.length;
      spans.push([starts[s], end]);
      at = end < text.length ? next(end) : -1;
    }
  }
  spans.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
    else merged.push([...span]);
  }
  const covered = merged.reduce((sum, [a, b]) => sum + b - a, 0);
  if (covered * 2 > text.length) return undefined;
  const rows = { index: 0, row: 0 };
  return merged.map(([startIndex, endIndex]) => {
    const startRow = rowAt(text, startIndex, rows);
    const endRow = rowAt(text, endIndex, rows);
    // a range that ends at the text's end ends on its last line, after its last character
    const endColumn = endIndex === text.length ? endIndex - (text.lastIndexOf('\n', endIndex - 1) + 1) : 0;
    return {
      startIndex,
      endIndex,
      startPosition: { row: startRow, column: 0 },
      endPosition: { row: endRow, column: endColumn },
    };
  });
}
