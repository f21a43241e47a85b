// Bad input to the registry commands exits 2 and names what to fix, before any request: a server
// that counts requests must see none.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countingServer, runInProcess } from '../cli/in-process.js';

let server: Awaited<ReturnType<typeof countingServer>>;
let before = 0;
beforeAll(async () => {
  server = await countingServer();
});
beforeEach(() => {
  before = server.count();
});
afterAll(() => server.close());
const requestsSent = () => server.count() - before;

const long = 'x'.repeat(1001);

// [argv after the globals, text the error must contain]
const cases: [string[], string][] = [
  [['node', 'update', 'my-node', '--description', long], '--description'],
  [['node', 'update', 'bad id!', '--name', 'x'], '<nodeId>'],
  [['node', 'update', 'my-node'], 'nothing to update'],
  [['node', 'update', 'my-node', '--status', 'gone'], '--status'],
  [['node', 'update', 'my-node', '--publisher', 'Not_Valid', '--name', 'x'], '--publisher'],
  [['node', 'update', 'my-node', '--name', 'x'.repeat(201)], '--name'],
  [['node', 'show', '-bad-'], 'unknown option'],
  [['node', 'show', 'bad..id!'], '<nodeId>'],
  [['node', 'versions', 'a b'], '<nodeId>'],
  [['node', 'search', 'x', '--limit', '500'], '--limit'],
  [['node', 'search', 'x', '--page', '0'], '--page'],
  [['node', 'search', 'x', '--page', '1e1'], '--page'],
  [['node', 'download', 'my-node@1.x'], '@<version>'],
  [['node', 'download', 'my-node', '--out', ''], '--out'],
  [['publisher', 'create', 'Bad_Id', '--name', 'x'], '<id>'],
  [['publisher', 'create', 'acme', '--name', ''], '--name'],
  [['publisher', 'show', 'A'], '<id>'],
  [['publisher', 'update', 'acme'], 'nothing to update'],
  [['publisher', 'update', 'acme', '--description', long], '--description'],
  [['publisher', 'members', 'add', 'acme', 'u1', '--role', 'king'], '--role'],
  [['version', 'update', 'my-node', '1.x', '--deprecate'], '<version>'],
  [['version', 'update', 'my-node', '1.0.0'], 'nothing to update'],
  [['version', 'update', 'my-node', '1.0.0', '--deprecate', '--undeprecate'], '--undeprecate'],
  [['version', 'update', 'my-node', '1.0.0', '--changelog', 'a', '--changelog-file', 'f'], '--changelog-file'],
  [['version', 'update', 'my-node', '1.0.0', '--changelog-file', '/nonexistent/changelog.md'], '--changelog-file'],
  [['version', 'update', 'my-node', '1.0.0', '--status', 'approved'], '--status'],
  [['version', 'update', 'my-node', '1.0.0', '--reason', long], '--reason'],
  [['version', 'deprecate', 'my-node', 'not a range!'], 'neither a version nor a semver range'],
  [['review', 'my-node', '--star', '6'], '--star'],
  [['review', 'my-node', '--star', '0'], '--star'],
  [['review', 'my-node', '--star', '2.5'], '--star'],
  [['review', 'my-node'], '--star'],
  [['token', 'create'], '--publisher'],
  [['token', 'create', '--publisher', 'acme', '--user'], '--user'],
  [['token', 'create', '--user', '--name', ''], '--name'],
  [['token', 'list', '--publisher', 'NOPE'], '--publisher'],
  [['user', 'create', 'alice', '--email', 'not-an-email'], '--email'],
  [['user', 'create', ''], '<name>'],
  [['completion', 'tcsh'], 'tcsh'],
];

describe('invalid input exits 2 before any request', () => {
  it.each(cases)('nodereg %j names %s', async (argv, named) => {
    const result = await runInProcess(['--registry', server.url, '--token', 'nrg_u_test', ...argv]);
    expect(result.stderr).toContain(named);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(requestsSent()).toBe(0);
  });

  it('with --json the error is one JSON document on stdout', async () => {
    const result = await runInProcess([
      '--registry',
      server.url,
      '--token',
      'nrg_u_test',
      '--json',
      'review',
      'my-node',
      '--star',
      '9',
    ]);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toEqual({
      error: { code: 'invalid_input', message: expect.stringContaining('--star') },
    });
    expect(requestsSent()).toBe(0);
  });

  it('login with an empty --token saves nothing and sends nothing', async () => {
    const result = await runInProcess(['--registry', server.url, '--token', ' ', 'login']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--token');
    expect(requestsSent()).toBe(0);
  });
});

describe('a command that needs a token says so before any request', () => {
  it.each([
    [['node', 'update', 'my-node', '--name', 'x']],
    [['publisher', 'create', 'acme']],
    [['review', 'my-node', '--star', '4']],
    [['token', 'list']],
    [['whoami']],
  ])('nodereg %j exits 4', async (argv) => {
    const result = await runInProcess(['--registry', server.url, ...argv]);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('nodereg login');
    expect(requestsSent()).toBe(0);
  });
});
