// Generators of hostile requests for the fuzzer: bodies derived from each operation's own JSON schema
// (so a new operation is fuzzed without a line here), then mutated; hostile strings for path
// parameters, query strings and headers; and raw HTTP messages for a socket.
// Every URL generated points at 127.0.0.1: the fuzzer sends nothing anywhere else, and neither may
// the server because of it.
import fc from 'fast-check';
import { z } from 'zod';
import type { Operation } from '../../../src/contract/operation.js';

type Schema = Record<string, unknown>;

/** Strings that have broken servers before: traversal, encodings, injections, numbers in disguise. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '.',
  '..',
  '../../etc/passwd',
  '%2e%2e',
  '%2F',
  '%00',
  '%',
  '%zz',
  '%ff%fe',
  '%c3%28',
  '%ed%a0%80',
  '\u0000',
  '\ud800',
  '😀',
  'é',
  'ǅ',
  '\u202e',
  'null',
  'undefined',
  'NaN',
  '-1',
  '0',
  '1e309',
  '0x10',
  '+3',
  ' 3',
  '99999999999999999999999',
  '__proto__',
  'constructor',
  'prototype',
  "'; DROP TABLE nodes;--",
  '" OR 1=1 --',
  '<script>alert(1)</script>',
  '${7*7}',
  '{{7*7}}',
  '\\',
  '/',
  '//',
  'a'.repeat(300),
  'v1.0.0',
  '1.0.0+build',
  'NodeStatusBanned',
  'admin',
  'nrg_u_',
  'nrg_pat_',
  '*',
  'AND',
  'NEAR(',
  '"',
  '^',
  'col:val',
];

/**
 * A string of any kind: printable, unicode, hostile, or long. `huge` allows strings far over Node's
 * 16 KiB header limit: right for bodies, wasteful in URLs (every such request is a 431).
 */
export const stringOf = (huge: boolean) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: 30 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
    { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: huge ? 300_000 : 5_000 }).map((n) => 'x'.repeat(n)) },
  );
export const anyString = stringOf(true);
/** For path segments and query values: long, rarely over the header limit. */
export const urlString = fc.oneof(
  { weight: 300, arbitrary: stringOf(false) },
  { weight: 1, arbitrary: fc.constant('x'.repeat(20_000)) },
);

/**
 * A placeholder that `encodings` replaces with JSON nested DEPTH deep: values that deep cannot be
 * built here (structuredClone and JSON.stringify would overflow the stack of this process too).
 */
export const deepPlaceholder = fc
  .tuple(fc.constantFrom(64, 65, 5_000, 100_000), fc.constantFrom('array', 'object'))
  .map(([depth, kind]) => `@@deep:${depth}:${kind}@@`);
const DEEP_PLACEHOLDER = /"@@deep:(\d+):(array|object)@@"/g;

/** Any JSON value, sometimes nested very deep (for fields that take anything). */
const anyValue = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: deepPlaceholder },
);

/** Values of every JSON type, and the awkward ones: huge, negative zero, deep, prototype keys. */
export const nastyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -0, -1, 1.5, 2 ** 53 + 1, -(2 ** 63), 1e308, -1e308, Number.MIN_VALUE),
  anyString,
  fc.constantFrom([], {}, [null], { __proto__: null }, JSON.parse('{"__proto__":{"admin":true}}'), {
    constructor: { prototype: {} },
  }),
  fc.array(anyString, { maxLength: 5 }),
  fc.integer({ min: 1_000, max: 100_000 }).map((n) => Array.from({ length: n }, (_, i) => i)),
  fc.jsonValue({ maxDepth: 4 }),
  deepPlaceholder,
);

/** A loopback URL (the only host any generated URL names). */
export const loopbackUrl = fc
  .tuple(
    fc.constantFrom('http://127.0.0.1', 'https://127.0.0.1', 'http://localhost', 'http://[::1]'),
    fc.integer({ min: 1, max: 65535 }),
    fc.webPath(),
  )
  .map(([origin, port, path]) => `${origin}:${port}${path}`);

/** Arbitraries for fields the fuzzer knows values of (ids that exist), by property name. */
export type Known = (name: string) => fc.Arbitrary<unknown> | undefined;

function typesOf(schema: Schema): string[] {
  return Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : [];
}

/** Values that satisfy (mostly) a JSON schema made by z.toJSONSchema: the shapes a client would send. */
export function fromSchema(schema: Schema | boolean, known: Known, name = ''): fc.Arbitrary<unknown> {
  if (schema === true || schema === false) return anyValue;
  const byName = name ? known(name) : undefined;
  if (byName)
    return fc.oneof(
      { weight: 3, arbitrary: byName },
      { weight: 1, arbitrary: fromSchema({ ...schema }, () => undefined) },
    );
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union) return fc.oneof(...union.map((option) => fromSchema(option, known, name)));
  const types = typesOf(schema);
  if (types.length > 1) return fc.oneof(...types.map((type) => fromSchema({ ...schema, type }, known, name)));
  switch (types[0]) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      const model = Object.fromEntries(
        Object.entries(properties).map(([key, value]) => [key, fromSchema(value, known, key)]),
      );
      const record = fc.record(model, { requiredKeys: required.filter((key) => key in properties) });
      const extra = schema.additionalProperties;
      if (extra === undefined || extra === false) return record;
      const free = fc
        .tuple(record, fc.dictionary(fc.string({ maxLength: 10 }), fromSchema(extra as Schema, known), { maxKeys: 3 }))
        .map(([a, b]) => ({ ...b, ...a }));
      // A free-form object (translations…) is where a client can nest as deep as it likes.
      return fc.oneof(
        free,
        deepPlaceholder.map((deep) => ({ deep })),
      );
    }
    case 'array':
      return fc.array(fromSchema((schema.items ?? {}) as Schema, known), {
        minLength: (schema.minItems as number | undefined) ?? 0,
        maxLength: Math.min((schema.maxItems as number | undefined) ?? 4, 4),
      });
    case 'string': {
      const min = (schema.minLength as number | undefined) ?? 0;
      const max = (schema.maxLength as number | undefined) ?? 10_000;
      if (/url$|^callback|^webhook/i.test(name)) return loopbackUrl;
      if (schema.format === 'email') return fc.emailAddress();
      const fitting = schema.pattern
        ? fc.stringMatching(new RegExp(schema.pattern as string)).filter((s) => s.length >= min && s.length <= max)
        : fc.string({ minLength: min, maxLength: Math.min(max, 40) });
      // the edges of the length rule: exactly the maximum, and one over
      return fc.oneof(
        { weight: 8, arbitrary: fitting },
        {
          weight: 1,
          arbitrary: fc.constantFrom('x'.repeat(Math.min(max, 2_000_000)), 'x'.repeat(Math.min(max, 2_000_000) + 1)),
        },
      );
    }
    case 'integer':
      return fc.integer({
        min: Math.max((schema.minimum as number | undefined) ?? -1e6, Number.MIN_SAFE_INTEGER),
        max: Math.min((schema.maximum as number | undefined) ?? 1e6, Number.MAX_SAFE_INTEGER),
      });
    case 'number':
      return fc.double({
        min: (schema.minimum as number | undefined) ?? -1e6,
        max: (schema.maximum as number | undefined) ?? 1e6,
        noNaN: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return anyValue;
  }
}

export function bodySchema(operation: Operation): Schema {
  return z.toJSONSchema(operation.body, { io: 'input', unrepresentable: 'any' }) as Schema;
}

/** Every path (as keys) inside a JSON value, the root included. */
function paths(
  value: unknown,
  prefix: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  out.push(prefix);
  if (value && typeof value === 'object' && out.length < 200) {
    for (const [key, child] of Object.entries(value))
      paths(child, [...prefix, Array.isArray(value) ? Number(key) : key], out);
  }
  return out;
}

/** One change to a valid body: a field replaced by a value of another type, removed, or an unknown one added. */
export function mutate(value: unknown): fc.Arbitrary<unknown> {
  return fc
    .tuple(
      fc.nat(),
      fc.constantFrom('replace', 'remove', 'add'),
      nastyJson,
      fc.constantFrom('extra', '__proto__', 'constructor', 'id', 'status', 'admin'),
    )
    .map(([pick, action, nasty, key]) => {
      const copy = structuredClone(value);
      const all = paths(copy);
      const path = all[pick % all.length];
      if (path.length === 0) return action === 'replace' ? nasty : copy;
      const parent = path.slice(0, -1).reduce<any>((node, k) => node[k], copy);
      const last = path[path.length - 1];
      if (action === 'replace') parent[last] = nasty;
      else if (action === 'remove') delete parent[last];
      else if (parent && typeof parent === 'object' && !Array.isArray(parent))
        Object.defineProperty(parent, key, { value: nasty, enumerable: true, writable: true, configurable: true });
      return copy;
    });
}

/** Nesting `depth` deep, as JSON text: arrays, objects, or a mix. */
export const deepJson = (depth: number, kind: 'array' | 'object') =>
  kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

/** The bytes of a body: the value as JSON, or that JSON broken in one of the ways clients break it. */
export function encodings(value: unknown): fc.Arbitrary<Buffer> {
  const json = (JSON.stringify(value) ?? 'null').replace(
    DEEP_PLACEHOLDER,
    (_, depth: string, kind: 'array' | 'object') => deepJson(Number(depth), kind),
  );
  const text = (s: string) => Buffer.from(s, 'utf8');
  const firstKey = /^\{"((?:[^"\\]|\\.)*)":/.exec(json)?.[1];
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant(text(json)) },
    // the same key twice (JSON.parse keeps the last one)
    {
      weight: 2,
      arbitrary: nastyJson.map((other) =>
        text(firstKey !== undefined ? `{"${firstKey}":${JSON.stringify(other) ?? 'null'},${json.slice(1)}` : json),
      ),
    },
    // invalid UTF-8 somewhere inside
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.nat(),
          fc.constantFrom([0xff], [0xfe, 0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x00]),
        )
        .map(([at, bytes]) => {
          const raw = text(json);
          const cut = at % (raw.length + 1);
          return Buffer.concat([raw.subarray(0, cut), Buffer.from(bytes), raw.subarray(cut)]);
        }),
    },
    // cut short, or with something after it
    { weight: 1, arbitrary: fc.nat().map((at) => text(json.slice(0, at % (json.length + 1)))) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('x', '}', ']', ',', '\u0000', ' {}', '\n{"a":1}').map((tail) => text(json + tail)),
    },
    { weight: 1, arbitrary: fc.constant(text(`\ufeff${json}`)) },
    // deep nesting, alone or in a field
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(100, 5_000, 100_000), fc.constantFrom('array' as const, 'object' as const), fc.boolean())
        .map(([depth, kind, inField]) =>
          text(
            inField && firstKey !== undefined
              ? `{"${firstKey}":${deepJson(depth, kind)},${json.slice(1)}`
              : deepJson(depth, kind),
          ),
        ),
    },
    // escapes JSON allows and strings do not like: lone surrogates, NUL
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          '"\\ud800"',
          '{"id":"\\u0000"}',
          '{"\\ud83d":1}',
          '1e400',
          '-',
          '0x10',
          '[1,]',
          "{'a':1}",
          'NaN',
          '',
        )
        .map(text),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
  );
}

/** A JSON body for an operation: valid per its schema, mutated, random, or none. */
export function jsonBody(operation: Operation, known: Known): fc.Arbitrary<Buffer | undefined> {
  const valid = fromSchema(bodySchema(operation), known);
  return fc.oneof(
    { weight: 6, arbitrary: valid.chain((value) => encodings(value)) },
    { weight: 6, arbitrary: valid.chain((value) => mutate(value)).chain((value) => encodings(value)) },
    { weight: 1, arbitrary: nastyJson.chain((value) => encodings(value)) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

// ---- raw HTTP ----

const CRLF = '\r\n';
const rawMethod = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'HEAD',
      'OPTIONS',
      'PATCH',
      'TRACE',
      'CONNECT',
      'PRI',
      'get',
      'G ET',
      'PROPFIND',
      'M-SEARCH',
      'SOURCE',
      'QUERY',
    ),
  },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 20 }) },
);
const rawTarget = (paths: string[]) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...paths) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...paths), fc.constantFrom(...NASTY_STRINGS))
        .map(([path, nasty]) => `${path}/${nasty}`),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '*',
        'http://127.0.0.1/nodes',
        '127.0.0.1:80',
        '',
        '/%',
        '/\u0000',
        '/\u00ff\u00fe',
        `/${'a'.repeat(20_000)}`,
        '/nodes?page=%ff',
        '/nodes#frag',
      ),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 40 }) },
  );
const rawVersion = fc.oneof(
  { weight: 8, arbitrary: fc.constant('HTTP/1.1') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'HTTP/1.0',
      'HTTP/2.0',
      'HTTP/0.9',
      'HTTP/1.1 extra',
      'HTTP/1',
      'http/1.1',
      '',
      'HTTP/1.1\u0000',
      'HTTP/9.9',
    ),
  },
);
const rawHeader = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'Host: 127.0.0.1',
      'Accept: */*',
      'Content-Type: application/json',
      'Content-Type: application/zip',
      'Connection: close',
      'Connection: keep-alive',
      'Authorization: Bearer nrg_u_nothing',
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'Content-Length: 5',
      'Content-Length: -1',
      'Content-Length: 1e3',
      'Content-Length: 99999999999999999999',
      'Content-Length: 5, 6',
      'Transfer-Encoding: chunked',
      'Transfer-Encoding: gzip, chunked',
      'Transfer-Encoding: identity',
      'Transfer-Encoding: chunked, chunked',
      'Expect: 100-continue',
      'Expect: nonsense',
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Upgrade: h2c',
      'HTTP2-Settings: AAMAAABkAAQAAP__',
      'Content-Encoding: gzip',
      'X-Content-SHA256: zz',
      'Authorization: Basic Zm9vOmJhcg==',
      'Authorization: Bearer',
      'Authorization:',
      'Host:',
      ' Host: folded',
      'Bad Header: x',
      'NoColon',
      ': empty-name',
      'X-\u0000: nul',
      'X-Test: a\u0000b',
      'X-Test: \u00ff\u00fe',
      'X-Fold: a\r\n b',
      'Cookie: a=b',
      'X-Forwarded-For: 1.2.3.4',
      'Range: bytes=0-1',
      'If-None-Match: *',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 80_000 }).map((n) => `X-Big: ${'h'.repeat(n)}`) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ unit: 'binary-ascii', maxLength: 20 }), fc.string({ unit: 'binary-ascii', maxLength: 40 }))
      .map(([k, v]) => `${k}: ${v}`),
  },
);
const rawBody = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '{}',
      '{"id":"x"}',
      'hello',
      '5\r\nhello\r\n0\r\n\r\n',
      'zz\r\nhello\r\n0\r\n\r\n',
      '0\r\n\r\n',
      'ffffffffffffffff\r\nx\r\n',
      '5;ext\r\nhello\r\n0\r\nTrailer: x\r\n\r\n',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 100 }) },
);

/** One raw HTTP message (or two, pipelined), as latin1 text; `complete` when no byte is missing from it. */
export function rawMessages(paths: string[]): fc.Arbitrary<string> {
  const message = fc
    .tuple(
      rawMethod,
      rawTarget(paths),
      rawVersion,
      fc.array(rawHeader, { maxLength: 6 }),
      rawBody,
      fc.constantFrom(CRLF, '\n', '\r'),
      fc.boolean(),
    )
    .map(([method, target, version, headers, body, eol, withHost]) => {
      const lines = [`${method} ${target} ${version}`.trimEnd(), ...(withHost ? ['Host: 127.0.0.1'] : []), ...headers];
      return lines.join(eol) + eol + eol + body;
    });
  return fc.oneof(
    { weight: 8, arbitrary: message },
    { weight: 2, arbitrary: fc.tuple(message, message).map(([a, b]) => a + b) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString('latin1')) },
  );
}
