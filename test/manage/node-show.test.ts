// `nodereg node show ID` in-process against a real registry on 127.0.0.1: its output, exit codes and
// the global options it reads (the flags, before or after the command, the variables and --verbose).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import { call, createPublisher, createUser, publishAndUpload } from '../server/fixtures.js';
import { closedPort, runInProcess } from '../cli/in-process.js';

describe('nodereg node show', () => {
  let server: TestServer;
  let dead: string;
  let ownerToken: string;

  beforeAll(async () => {
    server = await startServer();
    dead = `http://127.0.0.1:${await closedPort()}`;
    const owner = await createUser(server, 'showowner');
    ownerToken = owner.token;
    await createPublisher(server, owner, 'showpub');
    await publishAndUpload(server, owner.token, 'showpub', 'shown-node', '1.0.0', {
      node: { name: 'Shown Node', description: 'shown twice', tags: ['a', 'b'] },
    });
    await publishAndUpload(server, owner.token, 'showpub', 'shown-node', '1.1.0', {
      node_version: { changelog: 'more' },
    });
    const reviewer = await createUser(server, 'showreviewer');
    expect((await call(server.url, 'POST', '/nodes/shown-node/reviews?star=4', { token: reviewer.token })).status).toBe(
      200,
    );
  });
  afterAll(() => server?.close());

  it.each([
    ['a node', (url: string) => ['--registry', url, 'node', 'show', 'shown-node'], 0, 'Shown Node (shown-node)'],
    [
      'a node, as JSON',
      (url: string) => ['--registry', url, '--json', 'node', 'show', 'shown-node'],
      0,
      '"id":"shown-node"',
    ],
    [
      "a node, with its publisher's token",
      (url: string) => ['node', 'show', 'shown-node', '--registry', url, '--token', ownerToken],
      0,
      'shown-node',
    ],
    [
      'a node, with a profile that does not exist',
      (url: string) => ['--registry', url, '--profile', 'nope', 'node', 'show', 'shown-node'],
      0,
      'shown-node',
    ],
    ['an unknown node', (url: string) => ['--registry', url, 'node', 'show', 'ghost'], 5, undefined],
    [
      'an unknown node, as JSON',
      (url: string) => ['--registry', url, '--json', 'node', 'show', 'ghost'],
      5,
      '"code":"not_found"',
    ],
    [
      'a registry that is not a URL',
      () => ['--registry', 'localhost:4880', 'node', 'show', 'shown-node'],
      2,
      undefined,
    ],
    [
      'a registry that does not answer',
      (_url: string, closed: string) => ['--registry', closed, 'node', 'show', 'shown-node'],
      1,
      undefined,
    ],
    ['an id the contract refuses', (url: string) => ['--registry', url, 'node', 'show', 'bad..id!'], 2, undefined],
  ])('%s', async (_name, argv, code, shown) => {
    const result = await runInProcess(argv(server.url, dead));
    expect(result.code, result.stderr).toBe(code);
    if (shown) expect(result.stdout.replace(/\s+/g, '')).toContain(shown.replace(/\s+/g, ''));
    if (code !== 0) expect(result.stderr).toMatch(/^error: /m);
  });

  it('the registry from NODEREG_REGISTRY: the node, its rating and its versions', async () => {
    const result = await runInProcess(['node', 'show', 'shown-node', '--no-input'], {
      env: { NODEREG_REGISTRY: server.url },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/rating: +4\.0 \/ 5/);
    expect(result.stdout).toMatch(/^1\.1\.0 +active/m);
  });

  it('--verbose logs both reads', async () => {
    const result = await runInProcess(['--verbose', '--registry', server.url, 'node', 'show', 'shown-node']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`→ GET ${server.url}/nodes/shown-node\n`);
    expect(result.stderr).toContain(`→ GET ${server.url}/nodes/shown-node/versions\n`);
  });
});
