// jsonErrorOffset (src/server/json-shape.ts) says where a body JSON.parse refused stops being JSON, so
// that a 400 names a byte rather than quoting the body: it must agree with JSON.parse on what is JSON,
// and point where JSON.parse points when JSON.parse says.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonErrorOffset } from '../../../src/server/json-shape.js';

/** JSON.parse's verdict on `bytes` as the server reads them: undefined when it is JSON, else the byte it names (null when it names none). */
function parseVerdict(bytes: Buffer): number | null | undefined {
  const text = bytes.toString('utf8');
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    const position = /at position (\d+)/.exec((error as Error).message)?.[1];
    if (/Unexpected end of JSON input/.test((error as Error).message)) return bytes.length;
    return position === undefined ? null : Buffer.byteLength(text.slice(0, Number(position)));
  }
}

describe('jsonErrorOffset', () => {
  it.each([
    ['', 0],
    ['   ', 3],
    ['{', 1],
    ['{"a":1', 6],
    ['{"a":1} x', 8],
    ['{"a":}', 5],
    ['abc', 0],
    ['[01]', 2],
    ['{a:1}', 1],
    ['{"a":1,}', 7],
    ['"\\q"', 2],
    ['"\\u12g4"', 5],
    ['"x\u0001"', 2],
    ['[1,2,', 5],
    ['tru', 3],
    ['trux', 3],
    ['-', 1],
    ['1.', 2],
    ['1e+', 3],
    ['[1}', 2],
    ['{"a" 1}', 5],
    ['\x1f\x8b\x08\x00', 0],
    ['\ufeff{}', 0],
  ])('%j breaks at byte %i', (text, at) => {
    expect(jsonErrorOffset(Buffer.from(text))).toBe(at);
  });

  it.each(['{}', '[]', ' [1, -2.5e+3, "a\\"\\u00e9", true, false, null, {"k": [{}]}] ', '"é"', '0', '-0.1E2'])(
    '%j is JSON',
    (text) => {
      expect(jsonErrorOffset(Buffer.from(text))).toBeUndefined();
    },
  );

  it('agrees with JSON.parse on JSON texts with a byte changed, taken out or put in', () => {
    const edit = fc.tuple(
      fc.json(),
      fc.nat(),
      fc.constantFrom('replace', 'delete', 'insert'),
      fc.constantFrom(...'{}[]:,"\\ 0-.eE+tfnu\u0001x\u00e9'),
    );
    fc.assert(
      fc.property(edit, ([json, where, how, char]) => {
        const at = json.length === 0 ? 0 : where % json.length;
        const text =
          how === 'insert'
            ? json.slice(0, at) + char + json.slice(at)
            : json.slice(0, at) + (how === 'replace' ? char : '') + json.slice(at + 1);
        const bytes = Buffer.from(text);
        const verdict = parseVerdict(bytes);
        const offset = jsonErrorOffset(bytes);
        if (verdict === undefined) expect(offset, text).toBeUndefined();
        else if (verdict === null) expect(offset, text).toBeTypeOf('number');
        else expect(offset, text).toBe(verdict);
      }),
      { numRuns: 3000, seed: 20261126 },
    );
  });
});
