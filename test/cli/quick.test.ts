// The command lines bin/nodereg.js runs without the full program (quick-args.ts, quick.ts): which
// ones are taken, and that each is answered exactly as the full program answers it, against a real
// registry on 127.0.0.1.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isNodeId } from '../../src/contract/limits.js';
import { nodeId } from '../../src/contract/resources.js';
import { quickCommand, SWITCHES, VALUE_OPTIONS } from '../../src/cli/quick-args.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { call, createPublisher, createUser, publishAndUpload } from '../server/fixtures.js';
import { closedPort, runInProcess, type InProcessOptions } from './in-process.js';

describe('which command lines quick.ts takes', () => {
  it.each([
    [['node', 'show', 'my-node'], {}],
    [['--json', 'node', 'show', 'my-node'], { json: true }],
    [['node', 'show', 'my-node', '--json', '--verbose', '--no-input'], { json: true, verbose: true, input: false }],
    [['--registry', 'http://127.0.0.1:1', 'node', 'show', 'my-node'], { registry: 'http://127.0.0.1:1' }],
    [['--registry=http://127.0.0.1:1', '--token=t', '--profile', 'ci', 'node', 'show', 'a.b_c-d'], { registry: 'http://127.0.0.1:1', token: 't', profile: 'ci' }],
    [['node', 'show', 'my-node', '--token', ''], { token: '' }],
  ])('takes %j', (argv, globals) => {
    const taken = quickCommand(argv);
    expect(taken?.nodeId).toBe(argv.find((a, i) => argv[i - 1] === 'show'));
    expect(taken?.globals).toEqual({ input: true, ...globals });
  });

  it.each([
    [[]],
    [['--help']],
    [['-V']],
    [['node', 'show']],
    [['node', 'show', 'a', 'b']],
    [['node', 'show', 'a', '--help']],
    [['node', 'show', 'a', '-h']],
    [['node', 'versions', 'a']],
    [['show', 'node', 'a']],
    [['node', 'show', '-bad-']],
    [['node', 'show', 'bad..id!']],
    [['node', 'show', 'search']],
    [['node', 'show', 'SEARCH']],
    [['node', 'show', 'x'.repeat(101)]],
    [['node', 'show', '--', 'a']],
    [['node', 'show', 'a', '--registry']],
    [['--registry', '--json', 'node', 'show', 'a']],
    [['--json', '--json', 'node', 'show', 'a']],
    [['--json=1', 'node', 'show', 'a']],
    [['--reasons', 'node', 'show', 'a']],
  ])('leaves %j to the full program', (argv) => {
    expect(quickCommand(argv)).toBeUndefined();
  });

  it("knows every global option of the program, so that none is taken for a word", async () => {
    const help = (await runInProcess(['--help'])).stdout;
    const globals = [...help.slice(help.indexOf('Options:'), help.indexOf('Commands:')).matchAll(/^ +(?:-\w, )?(--[\w-]+)/gm)].map((m) => m[1]);
    expect(globals.filter((o) => o !== '--version' && o !== '--help').sort()).toEqual([...Object.keys(VALUE_OPTIONS), ...Object.keys(SWITCHES)].sort());
  });

  it('takes a node id exactly when the contract accepts it', () => {
    const idChars = fc.constantFrom(...'aZ09._-!/ é'.split(''), 's', 'e', 'r', 'c', 'h');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: idChars, maxLength: 12 }), fc.constantFrom('search', 'Search', 'x'.repeat(100), 'x'.repeat(101))), (id) => {
        expect(isNodeId(id)).toBe(nodeId.safeParse(id).success);
        expect(quickCommand(['node', 'show', id]) !== undefined).toBe(id.startsWith('-') ? false : nodeId.safeParse(id).success);
      }),
      { numRuns: 2000, seed: 1125 },
    );
  });
});

describe('a command line quick.ts takes is answered as the full program answers it', () => {
  let server: TestServer;
  let dead: string;
  let ownerToken: string;

  beforeAll(async () => {
    server = await startServer();
    dead = `http://127.0.0.1:${await closedPort()}`;
    const owner = await createUser(server, 'quickowner');
    ownerToken = owner.token;
    await createPublisher(server, owner, 'quickpub');
    await publishAndUpload(server, owner.token, 'quickpub', 'quick-node', '1.0.0', { node: { name: 'Quick Node', description: 'shown twice', tags: ['a', 'b'] } });
    await publishAndUpload(server, owner.token, 'quickpub', 'quick-node', '1.1.0', { node_version: { changelog: 'more' } });
    const reviewer = await createUser(server, 'quickreviewer');
    expect((await call(server.url, 'POST', '/nodes/quick-node/reviews?star=4', { token: reviewer.token })).status).toBe(200);
    // both runs must read the same "now" for their relative times
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
  });

  afterAll(async () => {
    vi.useRealTimers();
    await server?.close();
  });

  const both = async (argv: string[], options: InProcessOptions = {}) => {
    const home = tempDir('nodereg-home-');
    const quick = await runInProcess(argv, { ...options, home, entry: 'quick' });
    const program = await runInProcess(argv, { ...options, home, entry: 'program' });
    return { quick, program };
  };

  it.each([
    ['a node', (url: string) => ['--registry', url, 'node', 'show', 'quick-node'], 0],
    ['a node, as JSON', (url: string) => ['--registry', url, '--json', 'node', 'show', 'quick-node'], 0],
    ["a node, with its publisher's token", (url: string) => ['node', 'show', 'quick-node', '--registry', url, '--token', ownerToken], 0],
    ['a node, with a profile that does not exist', (url: string) => ['--registry', url, '--profile', 'nope', 'node', 'show', 'quick-node'], 0],
    ['an unknown node', (url: string) => ['--registry', url, 'node', 'show', 'ghost'], 5],
    ['an unknown node, as JSON', (url: string) => ['--registry', url, '--json', 'node', 'show', 'ghost'], 5],
    ['a registry that is not a URL', () => ['--registry', 'localhost:4880', 'node', 'show', 'quick-node'], 2],
    ['a registry that does not answer', (_url: string, closed: string) => ['--registry', closed, 'node', 'show', 'quick-node'], 1],
  ])('%s', async (_name, argv, code) => {
    const { quick, program } = await both(argv(server.url, dead));
    expect(program.code).toBe(code);
    expect(quick).toEqual(program);
    if (code === 0) expect(quick.stdout).toContain('quick-node');
  });

  it('the registry from NODEREG_REGISTRY', async () => {
    const { quick, program } = await both(['node', 'show', 'quick-node', '--no-input'], { env: { NODEREG_REGISTRY: server.url } });
    expect(program.code).toBe(0);
    expect(quick).toEqual(program);
    expect(quick.stdout).toMatch(/rating: +4\.0 \/ 5/);
    expect(quick.stdout).toMatch(/^1\.1\.0 +active/m);
  });

  it('--verbose logs the same requests', async () => {
    const { quick, program } = await both(['--verbose', '--registry', server.url, 'node', 'show', 'quick-node']);
    expect(quick.code).toBe(0);
    expect(quick.stdout).toBe(program.stdout);
    // the two reads run at once: their lines may interleave in either order
    const lines = (text: string) => text.split('\n').sort();
    expect(lines(quick.stderr)).toEqual(lines(program.stderr));
    expect(quick.stderr).toContain(`→ GET ${server.url}/nodes/quick-node`);
  });
});
