// The client reads answers with checks generated from the contract (contract/answers.ts), not with
// zod. They must read every answer as the contract's zod schemas do: the same verdict, the same
// defaults filled in, and an answer that fails kept as sent. Real answers of a real registry are
// the starting point; fast-check then breaks them in every way a newer or a foreign server might.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meetsContract, readAnswer } from '../../src/contract/answers.js';
import { ErrorBody } from '../../src/contract/error-body.js';
import { readStatusReason } from '../../src/contract/review-history.js';
import { parseStatusReason } from '../../src/contract/status-reason.js';
import { allOperations } from '../../src/contract/openapi.js';
import type { Operation } from '../../src/contract/operation.js';
import { startServer, type TestServer } from '../helpers.js';
import { call, createPat, createPublisher, createUser, publishAndUpload } from '../server/fixtures.js';

const operation = (id: string): Operation => allOperations.find((o) => o.id === id)!;

/** How the client read answers before: zod's parse when it succeeds, else the answer as sent. */
function zodReading(schema: Operation['response'], text: string): { meets: boolean; value: unknown } {
  const parsed = schema.safeParse(JSON.parse(text));
  return { meets: parsed.success, value: parsed.success ? parsed.data : JSON.parse(text) };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every path to a value inside `value` (the root is `[]`). */
function paths(value: Json, at: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [at];
  const keys: (string | number)[] = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return [at, ...keys.flatMap((key) => paths((value as Record<string, Json>)[key as string], [...at, key]))];
}

type Change = { kind: 'delete' | 'set' | 'add'; pick: number; value: Json; key: string };

/** `answer` with one change at the path `pick` chooses: a key deleted, a value replaced, or a key added. */
function changed(answer: Json, change: Change): Json {
  const copy = structuredClone(answer);
  const all = paths(copy);
  const path = all[change.pick % all.length];
  if (path.length === 0) return change.kind === 'set' ? change.value : copy;
  const parent = path
    .slice(0, -1)
    .reduce<Json>((node, key) => (node as Record<string, Json>)[key as string], copy) as Record<string, Json>;
  const last = path[path.length - 1];
  if (change.kind === 'delete' && !Array.isArray(parent)) delete parent[last];
  else if (change.kind === 'add' && !Array.isArray(parent)) parent[change.key] = change.value;
  else parent[last as string] = change.value;
  return copy;
}

const changes: fc.Arbitrary<Change[]> = fc.array(
  fc.record({
    kind: fc.constantFrom('delete', 'set', 'add'),
    pick: fc.nat(),
    value: fc.oneof(
      fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
      fc.constantFrom<Json>('', 'NodeStatusActive', 'NodeVersionStatusFlagged', 0, 1.5, -1, 2 ** 60, null, [], {}),
    ),
    key: fc.constantFrom('name', 'extra', 'status', 'latest_version', 'findings', 'user', 'kind'),
  }),
  { minLength: 1, maxLength: 3 },
);

describe('answers read with the generated checks', () => {
  let server: TestServer;
  const answers: { id: string; text: string }[] = [];

  beforeAll(async () => {
    server = await startServer({ scan: 'flag' });
    const owner = await createUser(server, 'answersowner');
    await createPublisher(server, owner, 'answerspub', { description: 'reads' });
    await publishAndUpload(server, owner.token, 'answerspub', 'answers-node', '1.0.0', {
      node: { tags: ['x'], supported_os: ['linux'] },
    });
    const pat = await createPat(server, owner, 'answerspub');
    const get = async (id: string, path: string, token?: string) => {
      const reply = await call(server.url, 'GET', path, { token });
      expect(reply.status, reply.text).toBe(200);
      answers.push({ id, text: reply.text });
    };
    await get('getNode', '/nodes/answers-node');
    await get('listNodeVersions', '/nodes/answers-node/versions?include_status_reason=true', owner.token);
    await get('listNodes', '/nodes');
    await get('getPublisher', '/publishers/answerspub', owner.token);
    await get('getMe', '/users/me', owner.token);
    await get('getMe', '/users/me', pat);
    await get('getLimits', '/limits');
    await get('health', '/healthz');
    const missing = await call(server.url, 'GET', '/nodes/ghost');
    answers.push({ id: 'ErrorBody', text: missing.text });
  });

  afterAll(() => server?.close());

  const schemaOf = (id: string) => (id === 'ErrorBody' ? ErrorBody : operation(id).response);

  it('reads each real answer as zod does', async () => {
    expect(answers.length).toBe(9);
    for (const { id, text } of answers) {
      const expected = zodReading(schemaOf(id), text);
      expect(expected.meets, `${id}: ${text}`).toBe(true);
      expect(await readAnswer(id, text), id).toEqual(expected.value);
    }
  });

  it('fills in the strings answers always carry, as zod does', async () => {
    const { text } = answers.find((a) => a.id === 'getNode')!;
    const { description: _description, repository: _repository, ...rest } = JSON.parse(text);
    const read = (await readAnswer('getNode', JSON.stringify(rest))) as Record<string, unknown>;
    expect(read.description).toBe('');
    expect(read.repository).toBe('');
  });

  it('gives the same verdict and the same reading for answers changed in any way', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 8 }), changes, async (which, edits) => {
        const { id, text: original } = answers[which % answers.length];
        const text = JSON.stringify(edits.reduce<Json>((answer, edit) => changed(answer, edit), JSON.parse(original)));
        const expected = zodReading(schemaOf(id), text);
        expect(await meetsContract(id, JSON.parse(text)), `${id}: ${text}`).toBe(expected.meets);
        expect(await readAnswer(id, text), `${id}: ${text}`).toEqual(expected.value);
      }),
      { numRuns: 3000, seed: 20261125 },
    );
  });
});

describe('the review history in a status_reason, read by the client with its generated check', () => {
  it('reads what the server’s schema reads, and nothing it refuses', () => {
    const entry = { status: 'NodeVersionStatusFlagged', message: 'why', by: 'admin', at: '2026-12-07T00:00:00Z' };
    const texts = [
      null,
      undefined,
      '',
      'a plain line from the scan',
      '{',
      '{}',
      JSON.stringify({ message: 'm', by: 'b' }),
      JSON.stringify({ message: 'm', by: 'b', statusHistory: [entry], extra: 1 }),
      JSON.stringify({ message: 'm' }),
      JSON.stringify({ message: 'm', by: 'b', statusHistory: [{ ...entry, status: 'Nope' }] }),
      JSON.stringify({ message: 'm', by: 'b', statusHistory: [{ ...entry, action: 'appeal' }] }),
      JSON.stringify({ message: 3, by: 'b' }),
    ];
    for (const text of texts) expect(readStatusReason(text), String(text)).toEqual(parseStatusReason(text));
    expect(readStatusReason(texts[7])).toMatchObject({ message: 'm', statusHistory: [entry] });
  });
});
