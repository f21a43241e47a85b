// `nodereg node list`: every node of the registry, of a publisher or of one's own publishers, read
// through every page of the registry's lists (issue 37).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE } from '../../src/contract/limits.js';
import { runInProcess } from '../cli/in-process.js';
import { startServer, type TestServer } from '../helpers.js';
import { createPublisher, createUser, publish, publishAndUpload, type TestUser } from '../server/fixtures.js';

let registry: TestServer;
let owner: TestUser;
/** One node more than a page holds: the list must read a second page. */
const MANY = PAGE.limitMax + 1;

beforeAll(async () => {
  // the nodes are published without archives: more than the default cap of pending versions
  registry = await startServer({ caps: { pendingVersions: 1000 } });
  owner = await createUser(registry, 'listowner');
  await createPublisher(registry, owner, 'listbig');
  await createPublisher(registry, owner, 'listsmall');
  const ids = Array.from({ length: MANY }, (_, i) => `big-node-${String(i).padStart(3, '0')}`);
  for (let i = 0; i < ids.length; i += 20)
    await Promise.all(
      ids.slice(i, i + 20).map(async (id) => {
        const reply = await publish(registry, owner.token, 'listbig', id, '1.0.0');
        expect(reply.status, reply.text).toBe(201);
      }),
    );
  await publishAndUpload(registry, owner.token, 'listsmall', 'small-node', '1.0.0');
  const other = await createUser(registry, 'listother');
  await createPublisher(registry, other, 'listothers');
  await publishAndUpload(registry, other.token, 'listothers', 'others-node', '1.0.0');
});
afterAll(() => registry?.close());

const as = (user?: TestUser) => ({
  env: { NODEREG_REGISTRY: registry.url, ...(user ? { NODEREG_TOKEN: user.token } : {}) },
});
const ids = (stdout: string) => JSON.parse(stdout).map((n: { id: string }) => n.id);

describe('node list', () => {
  it('--publisher reads every page of its nodes', async () => {
    const listed = await runInProcess(['node', 'list', '--publisher', 'listbig', '--json'], as());
    expect(listed.code, listed.stderr).toBe(0);
    const found = ids(listed.stdout);
    expect(found).toHaveLength(MANY);
    expect(new Set(found).size).toBe(MANY);
    const words = await runInProcess(['node', 'list', '--publisher', 'listsmall'], as());
    expect(words.stdout).toMatch(
      /^ID\s+NAME\s+LATEST\s+STATUS\s+PUBLISHER\nsmall-node\s.*1\.0\.0\s+active\s+listsmall\n$/,
    );
  });

  it('--mine lists the nodes of every publisher one belongs to, and no other', async () => {
    const listed = await runInProcess(['node', 'list', '--mine', '--json'], as(owner));
    expect(listed.code, listed.stderr).toBe(0);
    const found = ids(listed.stdout);
    expect(found).toHaveLength(MANY + 1);
    expect(found).toContain('small-node');
    expect(found).not.toContain('others-node');
  });

  it('without a flag lists what the registry lists, every page', async () => {
    const listed = await runInProcess(['node', 'list', '--json'], as());
    expect(listed.code, listed.stderr).toBe(0);
    const { total } = (await (await fetch(`${registry.url}/nodes?limit=1`)).json()) as { total: number };
    const found = ids(listed.stdout);
    expect(found).toHaveLength(total);
    expect(found).toEqual(expect.arrayContaining(['small-node', 'others-node']));
  });

  it('--mine needs a token, and takes no --publisher', async () => {
    const anonymous = await runInProcess(['node', 'list', '--mine'], as());
    expect(anonymous.code).toBe(4);
    const both = await runInProcess(['node', 'list', '--mine', '--publisher', 'listbig'], as(owner));
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("'--mine' cannot be used with option '--publisher <id>'");
  });
});
