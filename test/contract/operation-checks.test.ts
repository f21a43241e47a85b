// The CLI checks a request's params, query and body with checks generated from each operation's
// schemas (contract/operation-checks.ts), not with zod: for every operation, a check must accept what
// zod's parse accepts, output what it outputs, and refuse in the words of zod's first problem, which is
// what the server answers for the same request. fast-check builds requests from values near the rules.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { fieldErrors } from '../../src/contract/errors.js';
import { REPEATED_PARAMS } from '../../src/contract/fields.js';
import { allOperations } from '../../src/contract/openapi.js';
import { checkRequestPart, type OperationId, type RequestPart } from '../../src/contract/operation-checks.js';

/** Values near the contract's rules: empty, bounds, ids, URLs, numbers as text and as numbers. */
const VALUES: unknown[] = [
  '',
  ' ',
  'x',
  '  spaced  ',
  '0',
  '1',
  '3',
  '5',
  '6',
  '20',
  '101',
  '-1',
  '2.5',
  '1e1',
  'abc',
  'my-node',
  'Bad!Id',
  'owner',
  'member',
  'approve',
  'ban',
  'true',
  '1.0.0',
  'v1.2',
  'https://example.com/hook',
  'ftp://example.com',
  'a b c d e f g h i j k l',
  '(warm:1.2) light',
  '(warm:2) light',
  'x'.repeat(300),
  `https://example.com/${'a'.repeat(9000)}`,
  0,
  1,
  3,
  50,
  101,
  2.5,
  Number.NaN,
  true,
  false,
  null,
  [],
  ['a'],
  ['https://example.com/a.png', 'https://example.com/b.png'],
  {},
  { whites: 50 },
  { whites: 500 },
];

/** The keys of the object a part's schema checks (through refinements and transforms). */
function keysOf(schema: z.ZodType): string[] {
  if (schema instanceof z.ZodObject) return Object.keys(schema.shape);
  if (schema instanceof z.ZodPipe) return keysOf(schema.def.in as z.ZodType);
  return [];
}

/** A request as the client builds it: a parameter that may be repeated is sent as a list (fields.ts `repeated`). */
function asSent(schema: z.ZodType, request: Record<string, unknown>) {
  const shape = schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : {};
  return Object.fromEntries(
    Object.entries(request).map(([key, value]) => [
      key,
      shape[key] && REPEATED_PARAMS.has(shape[key]) && !Array.isArray(value) ? [value] : value,
    ]),
  );
}

/** What the server's zod makes of a part: its output, or its first problem. */
function zodVerdict(schema: z.ZodType, value: unknown) {
  const parsed = schema.safeParse(value);
  return parsed.success ? { value: parsed.data } : { refusal: fieldErrors(parsed.error.issues)[0] };
}

const parts = allOperations.flatMap((operation) =>
  (['params', 'query', 'body'] as RequestPart[])
    .filter((part) => part !== 'body' || operation.bodyKind === 'json')
    .map((part) => ({ id: operation.id as OperationId, part, schema: operation[part] as z.ZodType })),
);

describe('the generated checks of every operation’s params, query and body', () => {
  it('cover every operation of the contract', () => {
    expect(parts.length).toBeGreaterThan(100);
  });

  it.each(parts.filter(({ schema }) => keysOf(schema).length))(
    '$id $part: accepts what zod accepts, outputs what it outputs, refuses in the words of its first problem',
    async ({ id, part, schema }) => {
      const keys = keysOf(schema);
      const requests = fc.sample(
        fc.dictionary(fc.constantFrom(...keys), fc.constantFrom(...VALUES), { maxKeys: keys.length }),
        { numRuns: 60, seed: 20261207 },
      );
      for (const request of [{}, ...requests].map((sent) => asSent(schema, sent))) {
        expect(await checkRequestPart(id, part, request), JSON.stringify(request)).toEqual(zodVerdict(schema, request));
      }
    },
  );
});
