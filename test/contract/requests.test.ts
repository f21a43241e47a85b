// The CLI checks the publish request it builds from a manifest with a check generated from the
// contract (contract/requests.ts), and asks zod only when that check refuses. So the check must accept
// exactly what zod's PublishBody accepts, and output what zod's parse outputs (transforms, defaults,
// unknown keys dropped, keys in the schema's order): fast-check builds bodies field by field, valid
// and broken in the ways a pyproject.toml can break them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPublisherId, PUBLISHER_ID } from '../../src/contract/limits.js';
import { checkArgument, nodeWritable } from '../../src/contract/arguments.js';
import { checkNodeField } from '../../src/contract/node-fields.js';
import { fieldErrors } from '../../src/contract/errors.js';
import * as generated from '../../src/contract/generated/requests.js';
import { checkRequest } from '../../src/contract/requests.js';
import {
  NODE_WRITABLE_FIELDS,
  nodeFieldType,
  NodeWritable,
  nodeId,
  PublishBody,
  publisherId,
  semver,
} from '../../src/contract/resources.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Strings near every rule of the body: lengths at and over their limits (also in UTF-16 units), URLs, versions, ranges, ids. */
const TRICKY = [
  '',
  ' ',
  'x',
  'é',
  'search',
  'SEARCH',
  'my-node',
  '-node',
  'node-',
  'a.b_c-d',
  'x'.repeat(100),
  'x'.repeat(101),
  'https://example.com/icon.png',
  'http://h',
  'HTTPS://EXAMPLE.COM',
  'http:h',
  'http:\\\\h',
  'https://',
  'ftp://x.org',
  'https://a b',
  'https://x.org/' + 'a'.repeat(2040),
  'https://x.org/' + 'a'.repeat(2050),
  '1.0.0',
  'v1.2',
  '1',
  '1.2.3+cu121',
  '1.2.3-rc.1',
  '01.2.3',
  '1.2.3.4',
  'V1.0.0',
  '1.0.0-',
  'v' + '1'.repeat(300),
  '>=1.0.0',
  '>=1.0.0 <2.0.0',
  '>=1.2, <2',
  '==1.0',
  '^1.2',
  '*',
  '~=1.0',
  'not a range',
  '>=1.0.0'.padEnd(257, ' '),
  't'.repeat(64),
  't'.repeat(65),
  '🎨'.repeat(32),
  '🎨'.repeat(33),
  'a'.repeat(200),
  'a'.repeat(201),
  'd'.repeat(1000),
  'd'.repeat(1001),
  'a'.repeat(64).replace(/a/g, 'F'),
  'f'.repeat(64),
  'g'.repeat(64),
  'f'.repeat(63),
];
const tricky = fc.constantFrom(...TRICKY);
const text = fc.oneof(fc.string({ maxLength: 10 }), fc.string({ unit: 'binary', maxLength: 4 }));
const anyValue: fc.Arbitrary<Json> = fc.oneof(
  tricky,
  text,
  fc.constantFrom<Json>(null, 0, 1, -1, 1.5, 2 ** 53, true, false, [], {}, ['a', 1], { a: 1 }),
  fc.array(fc.oneof(text, tricky), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
);
/** Mostly `valid`, sometimes `invalid` (values near the field's rules). */
const mostly = <T extends Json>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<Json>) =>
  fc.oneof({ weight: 16, arbitrary: valid as fc.Arbitrary<Json> }, { weight: 1, arbitrary: invalid });
/** A field: mostly what it takes, sometimes anything. */
const field = (valid: fc.Arbitrary<Json>) =>
  fc.oneof({ weight: 20, arbitrary: valid }, { weight: 1, arbitrary: anyValue });

const strings = (maxLength: number) =>
  mostly(
    fc.array(text, { maxLength }),
    fc.oneof(
      fc.array(tricky, { maxLength }),
      fc.constantFrom(
        Array.from({ length: 65 }, (_, i) => `t${i}`),
        Array.from({ length: 513 }, () => 'n'),
      ),
    ),
  );
const url = mostly(
  fc.oneof(fc.constantFrom('', 'https://github.com/ada/image-tools', 'http://127.0.0.1:8080/x'), fc.webUrl()),
  fc.oneof(tricky, fc.constantFrom('http:h', 'github.com/a/b')),
);
const range = mostly(
  fc.constantFrom('', '>=1.0.0', '>=1.2, <2', '==1.0', '^1.2', '*', '1.x'),
  fc.oneof(tricky, fc.constant('not a range')),
);
const translations = mostly(
  fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }) as fc.Arbitrary<Json>,
  fc.constantFrom<Json>(
    Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`l${i}`, {}])),
    Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`l${i}`, {}])),
    { 'a-language-name-17': {} },
    { fr: { description: 'x'.repeat(70_000) } },
    { fr: { description: 'x'.repeat(65_000) } },
    null,
  ),
);
/** The incumbent's names of our fields, now and then (with a value that may differ from ours). */
const aliases = fc.oneof(
  { weight: 4, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        supported_comfyui_version: field(range),
        supported_comfyui_frontend_version: field(range),
        preempted_comfy_node_names: field(strings(3)),
        github_stars: field(fc.integer()),
      },
      { requiredKeys: [] },
    ),
  },
);
const withAliases = (record: fc.Arbitrary<Record<string, Json>>) =>
  fc.tuple(record, aliases).map(([fields, names]) => ({ ...fields, ...names }) as Json);

const node = withAliases(
  fc.record(
    {
      id: field(
        mostly(
          fc.oneof(
            fc.constantFrom('my-node', 'image_tools.v2', 'a'),
            fc.stringMatching(/^[a-zA-Z0-9][a-zA-Z0-9._-]{0,8}[a-zA-Z0-9]$/),
          ),
          fc.oneof(tricky, fc.constantFrom('search', 'Search')),
        ),
      ),
      name: field(text),
      description: field(text),
      author: field(text),
      license: field(text),
      category: field(text),
      repository: field(url),
      icon: field(url),
      banner_url: field(url),
      tags: field(strings(4)),
      supported_os: field(strings(3)),
      supported_accelerators: field(strings(3)),
      preempted_app_node_names: field(strings(3)),
      supported_appui_version: field(range),
      supported_appui_frontend_version: field(range),
      translations: field(translations),
      status: field(mostly(fc.constantFrom('NodeStatusActive', 'NodeStatusBanned'), fc.constant('Active'))),
      search_ranking: field(fc.integer()),
      publisher: anyValue,
      rating: anyValue,
      extra: anyValue,
    },
    { requiredKeys: [] },
  ),
);
const nodeVersion = withAliases(
  fc.record(
    {
      version: field(
        mostly(
          fc.constantFrom('1.0.0', 'v1.2', '1', '1.2.3+cu121', '1.4.0-rc.1', '2.0.0-alpha.0'),
          fc.oneof(tricky, fc.constantFrom('01.0.0', '1.0.0.0')),
        ),
      ),
      changelog: field(text),
      dependencies: field(strings(3)),
      tags: field(strings(3)),
      supported_os: field(strings(3)),
      supported_accelerators: field(strings(3)),
      supported_appui_version: field(range),
      supported_appui_frontend_version: field(range),
      archive_sha256: field(mostly(fc.stringMatching(/^[0-9a-fA-F]{64}$/), tricky)),
      archive_size: field(mostly(fc.integer({ min: 1, max: 2 ** 31 }), fc.constantFrom(0, -1, 1.5, 2 ** 53))),
      status: anyValue,
      extra: anyValue,
    },
    { requiredKeys: ['version'] },
  ),
);
const body = fc.record(
  {
    node,
    node_version: nodeVersion,
    personal_access_token: field(mostly(fc.string({ minLength: 1, maxLength: 10 }), tricky)),
    extra: anyValue,
  },
  { requiredKeys: ['node_version'] },
) as fc.Arbitrary<Json>;

describe('the generated check of a publish request', () => {
  it('accepts exactly what zod accepts, outputs what zod outputs (keys in the same order)', () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 9, arbitrary: body }, { weight: 1, arbitrary: anyValue }), (request) => {
        const before = JSON.stringify(request);
        const checked = checkRequest('PublishBody', request);
        const parsed = PublishBody.safeParse(structuredClone(request));
        expect(JSON.stringify(request), 'the request is left as it is').toBe(before);
        expect(checked !== undefined, before).toBe(parsed.success);
        if (!parsed.success) {
          refused++;
          expect(generated.PublishBody({ value: structuredClone(request) }), before).toBe(false);
          return;
        }
        accepted++;
        expect(checked, before).toEqual(parsed.data);
        expect(JSON.stringify(checked), before).toBe(JSON.stringify(parsed.data));
      }),
      { numRuns: 3000, seed: 20261125 },
    );
    // both verdicts are exercised, many times each
    expect(accepted).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(300);
  });

  it('fills in a missing node as zod does, and drops what zod drops', () => {
    const request = { node_version: { version: 'v2', extra: 1 }, extra: true };
    expect(checkRequest('PublishBody', request)).toEqual({ node: {}, node_version: { version: '2.0.0' } });
    expect(PublishBody.parse(request)).toEqual({ node: {}, node_version: { version: '2.0.0' } });
  });

  it('leaves to zod what JSON cannot hold, and never accepts what zod refuses', () => {
    const date = new Date('1979-05-27T07:32:00Z');
    for (const request of [
      { node: { id: 'n', translations: { fr: date } }, node_version: { version: '1.0.0' } },
      { node: { id: 'n', tags: [date] }, node_version: { version: '1.0.0' } },
      { node: { id: 'n', translations: date }, node_version: { version: '1.0.0' } },
      { node: { id: 'n', search_ranking: Number.NaN }, node_version: { version: '1.0.0' } },
    ]) {
      expect(checkRequest('PublishBody', request)).toBeUndefined();
    }
    expect(
      PublishBody.safeParse({ node: { id: 'n', translations: { fr: date } }, node_version: { version: '1.0.0' } })
        .success,
    ).toBe(true);
    expect(
      PublishBody.safeParse({ node: { id: 'n', translations: date }, node_version: { version: '1.0.0' } }).success,
    ).toBe(false);
  });
});

describe('what the manifest reads without zod', () => {
  it('isPublisherId is the publisherId rule, and PUBLISHER_ID.message its only problem', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.stringMatching(/^[a-z][a-z0-9-]{0,64}$/),
          fc.string({ maxLength: 70 }),
          fc.constantFrom('ab', 'a', 'A-b', 'a'.repeat(64), 'a'.repeat(65), 'ab\n', '1ab'),
        ),
        (id) => {
          const parsed = publisherId.safeParse(id);
          expect(isPublisherId(id), id).toBe(parsed.success);
          if (!parsed.success) expect(parsed.error.issues.map((i) => i.message).join('; ')).toBe(PUBLISHER_ID.message);
        },
      ),
      { numRuns: 1000, seed: 20261125 },
    );
  });

  it('the generated node fields are the contract’s, with their types, deprecations and descriptions', () => {
    expect(nodeWritable.map((f) => f.field)).toEqual(NODE_WRITABLE_FIELDS);
    for (const { field, type, deprecated, description } of nodeWritable) {
      expect(type, field).toBe(nodeFieldType(field));
      expect(deprecated, field).toBe(NodeWritable.shape[field].meta()?.deprecated === true);
      expect(description, field).toBe(NodeWritable.shape[field].description ?? field);
    }
    expect(nodeWritable.filter((f) => f.deprecated).map((f) => f.field)).toEqual(['category']);
    expect(nodeWritable.find((f) => f.field === 'translations')?.type).toBe('record');
  });
});

describe('the generated checks of the ids and versions commands take as arguments', () => {
  it('word a refusal as the server words the same field: the rule’s own message, or the error map’s', () => {
    const refused = (rule: 'NodeId' | 'PublisherId' | 'Semver', value: string) => {
      const checked = checkArgument(rule, value);
      return 'refusal' in checked ? checked.refusal : undefined;
    };
    expect(refused('NodeId', 'CON')).toEqual({ path: '(root)', message: expect.stringMatching(/^is reserved, /) });
    expect(refused('NodeId', '')).toEqual({ path: '(root)', message: 'must not be empty' });
    expect(refused('NodeId', 'x'.repeat(101))?.message).toBe('must be at most 100 characters long');
    expect(refused('PublisherId', 'A')?.message).toBe(PUBLISHER_ID.message);
    expect(refused('Semver', '1.0.0.0')?.message).toMatch(/^must be a version such as 1\.2\.3/);
    expect(refused('Semver', 'v2')).toBeUndefined();
  });

  it('word a missing value as missing, never throw (an untyped caller may pass none)', () => {
    for (const rule of ['NodeId', 'PublisherId', 'Semver'] as const) {
      expect(checkArgument(rule, undefined as unknown as string)).toEqual({
        refusal: { path: '(root)', message: 'is required' },
      });
    }
    expect(checkNodeField('NodeTags', undefined as unknown as string[])).toEqual({
      path: '(root)',
      message: 'is required',
    });
  });

  it('accept exactly what the contract’s rule accepts, output what it outputs, and refuse in its words', () => {
    const rules = [
      ['NodeId', nodeId],
      ['PublisherId', publisherId],
      ['Semver', semver],
    ] as const;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constantFrom(...TRICKY),
          fc.stringMatching(/^[a-zA-Z0-9][a-zA-Z0-9._-]{0,102}$/),
          fc.stringMatching(/^[vV]?\d{1,3}(\.\d{1,3}){0,3}([-+][a-z0-9.]{0,6})?$/),
          fc.string({ maxLength: 110 }),
        ),
        (value) => {
          for (const [id, rule] of rules) {
            const parsed = rule.safeParse(value);
            expect(checkArgument(id, value), `${id} ${JSON.stringify(value)}`).toEqual(
              parsed.success ? { value: parsed.data } : { refusal: fieldErrors(parsed.error.issues)[0] },
            );
          }
        },
      ),
      { numRuns: 1000, seed: 20261207 },
    );
  });
});

describe('the generated checks of the node fields init asks for', () => {
  it('refuse what NodeWritable’s field refuses, in the words of its first issue', () => {
    const fields = [
      ['NodeName', 'name'],
      ['NodeDescription', 'description'],
      ['NodeIcon', 'icon'],
    ] as const;
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom(...TRICKY), fc.string({ maxLength: 110 })),
        fc.array(fc.oneof(fc.constantFrom(...TRICKY), fc.string({ maxLength: 70 })), { maxLength: 70 }),
        (value, tags) => {
          for (const [rule, field] of fields) {
            const parsed = NodeWritable.shape[field].safeParse(value);
            expect(checkNodeField(rule, value), `${rule} ${JSON.stringify(value)}`).toEqual(
              parsed.success ? undefined : fieldErrors(parsed.error.issues)[0],
            );
          }
          const parsed = NodeWritable.shape.tags.safeParse(tags);
          expect(checkNodeField('NodeTags', tags), JSON.stringify(tags)).toEqual(
            parsed.success ? undefined : fieldErrors(parsed.error.issues)[0],
          );
        },
      ),
      { numRuns: 500, seed: 20261207 },
    );
    expect(checkNodeField('NodeIcon', 'example.com/icon.png')?.message).toMatch(/^must be an absolute http/);
    expect(checkNodeField('NodeTags', ['ok', 't'.repeat(65)])).toEqual({
      path: '1',
      message: 'must be at most 64 characters long',
    });
  });
});
