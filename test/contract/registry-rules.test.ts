// Registry field rules: ids, versions, lengths, the review star and list queries (DESIGN.md §3).
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { SEARCH_TERMS_MAX, searchTerms } from '../../src/contract/limits.js';
import { StarQuery } from '../../src/contract/registry.js';
import { ListNodesQuery, SearchNodesQuery } from '../../src/contract/reads.js';
import {
  NodeInput,
  PublishBody,
  PublisherInput,
  VersionUpdateBody,
  nodeId,
  publisherId,
  semver,
} from '../../src/contract/resources.js';

function paths(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.map((i) => i.path.map(String).join('.'));
}

describe('nodeId: 1–100 characters, letters/digits at both ends, ._- inside', () => {
  it.each([
    'a',
    'Z',
    '7',
    'ab',
    'my-node',
    'my_node.v2',
    'Comfy.Node-Pack_2',
    'a-b',
    'a..b',
    'x'.repeat(100),
    `a${'-'.repeat(98)}b`,
    'console',
    'com10',
    'auxiliary',
  ])('accepts %j', (id) => {
    expect(nodeId.parse(id)).toBe(id);
  });
  it.each([
    '',
    'x'.repeat(101),
    `a${'-'.repeat(99)}b`,
    '-a',
    'a-',
    '.a',
    'a.',
    '_a',
    'a_',
    'a b',
    'a/b',
    'a:b',
    'a@b',
    'nöde',
    '../x',
    'a\n',
    'search',
    'Search',
    // Windows device names: a node is installed into a folder named by its id
    'con',
    'CON',
    'aux.nodes',
    'nul',
    'com1',
    'LPT9',
  ])('rejects %j', (id) => {
    expect(nodeId.safeParse(id).success).toBe(false);
  });
  it('names the id field on a node body', () => {
    expect(paths(NodeInput, { id: '-bad-' })).toEqual(['id']);
    expect(paths(NodeInput, { id: 'x'.repeat(101) })).toEqual(['id']);
    expect(paths(NodeInput, { id: 'x'.repeat(100) })).toEqual([]);
  });
});

describe('publisherId: lowercase, starts with a letter, 2–64 characters', () => {
  it.each(['ab', 'example', 'my-publisher', 'a1', 'a-1', `a${'b'.repeat(63)}`])('accepts %j', (id) => {
    expect(publisherId.parse(id)).toBe(id);
  });
  it.each(['', 'a', `a${'b'.repeat(64)}`, 'Ab', 'aB', '1ab', '-ab', 'a_b', 'a.b', 'a b', 'ä-b'])('rejects %j', (id) => {
    expect(publisherId.safeParse(id).success).toBe(false);
  });
  it('names the id field on a publisher body', () => {
    expect(paths(PublisherInput, { id: 'Bad' })).toEqual(['id']);
  });
});

describe('semver: versions as publishers write them, stored as semver', () => {
  it.each([
    ['1.2', '1.2.0'],
    ['1', '1.0.0'],
    ['1.0', '1.0.0'],
    ['v1.2', '1.2.0'],
    ['1.0-beta.2', '1.0.0-beta.2'],
    ['1.2.3+x', '1.2.3'],
    ['1.2.3+build.5', '1.2.3'],
    ['1.2.3-beta+exp.sha.5114f85', '1.2.3-beta'],
    ['1.2.3', '1.2.3'],
    ['0.0.0', '0.0.0'],
    ['10.20.30', '10.20.30'],
    ['v1.2.3', '1.2.3'],
    ['1.2.3-beta.1', '1.2.3-beta.1'],
    ['1.2.3-alpha', '1.2.3-alpha'],
    ['1.2.3-rc.10', '1.2.3-rc.10'],
    ['1.2.3-0', '1.2.3-0'],
    ['1.2.3-x-y.0a', '1.2.3-x-y.0a'],
    ['v2.0.0-rc.1', '2.0.0-rc.1'],
    // short forms, completed as publish completes them (DESIGN.md §3)
    ['1.2', '1.2.0'],
    ['1', '1.0.0'],
    ['v1.2', '1.2.0'],
  ])('accepts %j as %j', (input, output) => {
    expect(semver.parse(input)).toBe(output);
  });
  it.each([
    '',
    'v',
    '1.',
    '1.2.3+',
    '1.2.3+a..b',
    '01.2',
    '01.2.3',
    '1.02.3',
    '1.2.03',
    '1.2.3-01',
    '1.2.3-',
    '1.2.3-beta..1',
    '1.2.3.4',
    'V1.2.3',
    'vv1.2.3',
    ' 1.2.3',
    '1.2.3 ',
    'latest',
    '-1.2.3',
  ])('rejects %j', (input) => {
    expect(semver.safeParse(input).success).toBe(false);
  });
});

describe('NodeInput description: at most 1000 characters', () => {
  it('accepts 1000 and rejects 1001, naming description', () => {
    expect(NodeInput.parse({ description: 'd'.repeat(1000) }).description).toHaveLength(1000);
    expect(paths(NodeInput, { description: 'd'.repeat(1001) })).toEqual(['description']);
  });
  it('null clears it and absence leaves it', () => {
    expect(NodeInput.parse({ description: null }).description).toBeNull();
    expect('description' in NodeInput.parse({})).toBe(false);
  });
  it('rejects a status outside the spec enum', () => {
    expect(paths(NodeInput, { status: 'NodeStatusGone' })).toEqual(['status']);
    for (const status of ['NodeStatusActive', 'NodeStatusDeleted', 'NodeStatusBanned']) {
      expect(NodeInput.parse({ status }).status).toBe(status);
    }
  });
});

describe('PublishBody', () => {
  it('requires node_version', () => {
    expect(paths(PublishBody, {})).toEqual(['node_version']);
    expect(paths(PublishBody, { node: { id: 'my-node' } })).toEqual(['node_version']);
  });
  it('requires node_version.version', () => {
    expect(paths(PublishBody, { node_version: {} })).toEqual(['node_version.version']);
    expect(paths(PublishBody, { node_version: { changelog: 'x' } })).toEqual(['node_version.version']);
  });
  it('rejects an invalid version, naming node_version.version', () => {
    expect(paths(PublishBody, { node_version: { version: '1.2.x' } })).toEqual(['node_version.version']);
    expect(paths(PublishBody, { node_version: { version: '1.2.3+' } })).toEqual(['node_version.version']);
  });
  it('normalises v1.2.3 to 1.2.3 (1.2 to 1.2.0, 1 to 1.0.0) and defaults node to {}', () => {
    const parsed = PublishBody.parse({ node_version: { version: 'v1.2.3' } });
    expect(parsed.node_version.version).toBe('1.2.3');
    expect(PublishBody.parse({ node_version: { version: '1.2' } }).node_version.version).toBe('1.2.0');
    expect(PublishBody.parse({ node_version: { version: 'v1' } }).node_version.version).toBe('1.0.0');
    expect(parsed.node).toEqual({});
  });
  it('checks the node inside: description 1001 rejected at node.description', () => {
    expect(paths(PublishBody, { node: { description: 'd'.repeat(1001) }, node_version: { version: '1.0.0' } })).toEqual(
      ['node.description'],
    );
  });
  it('rejects an empty personal_access_token', () => {
    expect(paths(PublishBody, { node_version: { version: '1.0.0' }, personal_access_token: '' })).toEqual([
      'personal_access_token',
    ]);
  });
});

describe('VersionUpdateBody', () => {
  it('accepts changelog and deprecated, rejects a non-boolean deprecated', () => {
    expect(VersionUpdateBody.parse({ changelog: 'fixed', deprecated: true })).toEqual({
      changelog: 'fixed',
      deprecated: true,
    });
    expect(paths(VersionUpdateBody, { deprecated: 'yes' })).toEqual(['deprecated']);
  });
});

describe('StarQuery: integer 1–5', () => {
  it.each([
    ['1', 1],
    ['3', 3],
    ['5', 5],
  ])('accepts %j as %s', (star, expected) => {
    expect(StarQuery.parse({ star })).toEqual({ star: expected });
  });
  // a query string carries text: a number is no value of the wire (4 is refused as 2.5 is)
  it.each(['0', '6', '2.5', 'abc', '', '-1', '10', 0, 4, 6, 2.5, Number.NaN])('rejects %j, naming star', (star) => {
    expect(paths(StarQuery, { star })).toContain('star');
  });
  // A query integer is written in decimal digits; Number()'s other forms are not integers of the wire.
  it('rejects query strings that are not decimal integers, such as "0x3" or "1e0"', () => {
    const notDecimal = ['0x3', '0b11', '0o3', '1e0', ' 3', '3 ', '+3'];
    const accepted = notDecimal.filter((star) => StarQuery.safeParse({ star }).success);
    expect(accepted).toEqual([]);
  });
  it('requires star, asking for a whole number (not text)', () => {
    expect(paths(StarQuery, {})).toEqual(['star']);
    expect(StarQuery.safeParse({}).error?.issues[0].message).toBe('is required: a whole number, such as 3');
  });
});

describe('ListNodesQuery', () => {
  it('defaults to page 1, limit 20, sort created_at', () => {
    expect(ListNodesQuery.parse({})).toEqual({ page: 1, limit: 20, sort: 'created_at' });
  });
  it.each([
    ['1', 1],
    ['50', 50],
    ['100', 100],
  ])('accepts limit %j', (limit, expected) => {
    expect(ListNodesQuery.parse({ limit }).limit).toBe(expected);
  });
  it.each(['0', '101', '-1', '2.5', 'all', '1000'])('rejects limit %j', (limit) => {
    expect(paths(ListNodesQuery, { limit })).toEqual(['limit']);
  });
  it('coerces page and rejects page 0', () => {
    expect(ListNodesQuery.parse({ page: '3' }).page).toBe(3);
    expect(paths(ListNodesQuery, { page: '0' })).toEqual(['page']);
  });
  it.each(['created_at', 'downloads', 'rating', 'name', 'search_ranking'])('accepts sort %s', (sort) => {
    expect(ListNodesQuery.parse({ sort }).sort).toBe(sort);
  });
  it.each(['id', 'Downloads', 'created', ''])('rejects sort %j', (sort) => {
    expect(paths(ListNodesQuery, { sort })).toEqual(['sort']);
  });
  it('search has the same limit bounds', () => {
    expect(SearchNodesQuery.parse({ q: 'x' })).toEqual({ q: 'x', page: 1, limit: 20 });
    expect(paths(SearchNodesQuery, { limit: '101' })).toEqual(['limit']);
    expect(SearchNodesQuery.parse({ limit: '100' }).limit).toBe(100);
  });
});

// Found from outside: `t` written 100 times held the server 0.55 s over 8,000 nodes (20 ms for one `t`):
// the index made a pass over every word starting with `t` for each of them.
describe(`SearchNodesQuery q: at most ${SEARCH_TERMS_MAX} different words`, () => {
  it('reads words as the index does, without repeats or a word that starts another one', () => {
    expect(searchTerms('T t tt  Tt, a (UIkit) ui "ui-kit"')).toEqual(['tt', 'a', 'uikit', 'kit']);
    expect(searchTerms('%_*')).toEqual([]);
  });
  it(`takes ${SEARCH_TERMS_MAX} different words and any number of repeats, and refuses one more word`, () => {
    const words = Array.from({ length: SEARCH_TERMS_MAX + 1 }, (_, i) => `w${String.fromCharCode(97 + i)}`);
    expect(SearchNodesQuery.parse({ q: words.slice(0, SEARCH_TERMS_MAX).join(' ') }).q).toBe(
      words.slice(0, SEARCH_TERMS_MAX).join(' '),
    );
    expect(paths(SearchNodesQuery, { q: 't '.repeat(100) })).toEqual([]);
    expect(paths(SearchNodesQuery, { q: words.join(' ') })).toEqual(['q']);
  });
});
