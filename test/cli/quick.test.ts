// The command lines bin/nodereg.js runs without the full program (quick-args.ts, quick.ts): which
// ones are taken, and that each is answered exactly as the full program answers it, against a real
// registry on 127.0.0.1.
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { register as registerPublish } from '../../src/cli/commands/publish.js';
import { Ctx } from '../../src/cli/context.js';
import { isNodeId } from '../../src/contract/limits.js';
import { DEFAULT_SCAN_FAIL_ON } from '../../src/shared/scan.js';
import { nodeId } from '../../src/contract/resources.js';
import { PUBLISH_OPTIONS, quickCommand, SWITCHES, VALUE_OPTIONS } from '../../src/cli/quick-args.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';
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
    expect(taken).toEqual({ kind: 'node-show', nodeId: argv.find((a, i) => argv[i - 1] === 'show'), globals: { input: true, ...globals } });
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
    [['node', 'show', 'a', '--dry-run']],
    [['--dry-run', 'publish']],
    [['publish', 'a', 'b']],
    [['publish', '--help']],
    [['publish', '--', 'dir']],
    [['publish', '--fail-on', 'severe']],
    [['publish', '--fail-on']],
    [['publish', '--changelog-file', '-']],
    [['publish', '--changelog', '--dry-run']],
    [['publish', '--dry-run', '--dry-run']],
    [['publish', '--dry-run=yes']],
    [['publish', '--reasons']],
  ])('leaves %j to the full program', (argv) => {
    expect(quickCommand(argv)).toBeUndefined();
  });

  it.each<[string[], Record<string, unknown>, string | undefined, Record<string, unknown>?]>([
    [['publish'], {}, undefined],
    [['publish', 'my-node', '--json'], {}, 'my-node', { json: true }],
    [['--verbose', 'publish', '--dry-run', '--skip-existing', '--accept-findings', '--create-publisher'], { dryRun: true, skipExisting: true, acceptFindings: true, createPublisher: true }, undefined, { verbose: true }],
    [['publish', '--changelog', 'fixed it', '--changelog-file=notes.md', 'dir', '--publisher', 'team'], { changelog: 'fixed it', changelogFile: 'notes.md', publisher: 'team' }, 'dir'],
    [['publish', '--max-size=', '--fail-on', 'critical', '--registry', 'http://127.0.0.1:1'], { maxSize: '', failOn: 'critical' }, undefined, { registry: 'http://127.0.0.1:1' }],
  ])('takes %j', (argv, options, dir, globals = {}) => {
    expect(quickCommand(argv)).toEqual({ kind: 'publish', dir, options: { failOn: DEFAULT_SCAN_FAIL_ON, ...options }, globals: { input: true, ...globals } });
  });

  it('knows every option of publish, each with the key and the value commander gives it', async () => {
    const help = (await runInProcess(['publish', '--help'])).stdout.split('\nGlobal Options:')[0]; // its own, not the program's
    const listed = [...help.matchAll(/^ +(--[\w-]+)( <\w+>)?/gm)].filter((m) => m[1] !== '--help');
    const camel = (name: string) => name.slice(2).replace(/-(\w)/g, (_m, c: string) => c.toUpperCase());
    expect(Object.fromEntries(listed.map((m) => [m[1], [camel(m[1]), m[2] !== undefined]]))).toEqual(PUBLISH_OPTIONS);
    expect(help.replace(/\s+/g, ' ')).toContain(`default: "${DEFAULT_SCAN_FAIL_ON}")`);
  });

  it('a publish line it takes means what it means to commander: the same directory and options', () => {
    // publish's own command, parsed by commander with its action replaced by one that keeps what it got
    const parse = (argv: string[]) => {
      const program = new Command('nodereg').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
      registerPublish(program, new Ctx(() => ({ input: true }), '0.0.0-test', {}));
      let got: { dir?: string; options: Record<string, unknown> } | undefined;
      program.commands[0].exitOverride().action((dir: string | undefined, options: Record<string, unknown>) => void (got = { dir, options: { ...options } }));
      try {
        program.parse(argv, { from: 'user' });
      } catch (error) {
        if (!(error instanceof CommanderError)) throw error;
      }
      return got;
    };
    const names = Object.keys(PUBLISH_OPTIONS);
    const values = fc.constantFrom('', 'x', 'two words', '-x', '--dry-run', 'high', 'critical', 'severe', '10 MB');
    const arg = fc.oneof(
      fc.constantFrom(...names, 'dir', 'other', '--', '-', '--json'),
      fc.tuple(fc.constantFrom(...names), values).map(([name, value]) => `${name}=${value}`),
      values,
    );
    let taken = 0;
    fc.assert(
      fc.property(fc.array(arg, { maxLength: 6 }), (rest) => {
        const argv = ['publish', ...rest];
        const quick = quickCommand(argv.filter((a) => a !== '--json'));
        if (quick?.kind !== 'publish') return;
        taken++;
        expect(parse(argv.filter((a) => a !== '--json'))).toEqual({ dir: quick.dir, options: quick.options });
      }),
      { numRuns: 3000, seed: 1125 },
    );
    expect(taken).toBeGreaterThan(300);
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

describe('a publish line quick-publish.ts takes is answered as the full program answers it', () => {
  let server: TestServer;
  let token: string;
  let count = 0;

  beforeAll(async () => {
    server = await startServer();
    const owner = await createUser(server, 'quickpublisher');
    token = owner.token;
    await createPublisher(server, owner, 'quickteam');
  });
  afterAll(() => server?.close());

  /** A node's directory: a valid project unless `files` say otherwise. */
  const project = (files: Record<string, string> = {}, publisher = 'quickteam') => {
    const id = `quick-publish-${++count}`;
    const dir = writeTree(tempDir('nodereg-quick-publish-'), {
      'pyproject.toml': `[project]\nname = "${id}"\nversion = "1.0.0"\ndescription = "Published twice"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "${publisher}"\n`,
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      'web/app.js': 'export const shown = true;\n',
      ...files,
    });
    return { id, dir };
  };

  const both = async (argv: string[], env: Record<string, string | undefined> = {}) => {
    const options = { home: tempDir('nodereg-home-'), env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: token, ...env } };
    const quick = await runInProcess(argv, { ...options, entry: 'quick-publish' });
    const program = await runInProcess(argv, { ...options, entry: 'program' });
    return { quick, program };
  };

  it.each([
    ['a dry run, as JSON', () => ['publish', project().dir, '--dry-run', '--json'], 0],
    ['a dry run', () => ['publish', '--dry-run', project().dir, '--changelog', 'first'], 0],
    ['a project with problems', () => ['publish', project({ 'pyproject.toml': '[project]\nname = "Bad Name!"\n' }).dir, '--json'], 2],
    ['a directory that does not exist', () => ['publish', join(tempDir(), 'missing')], 2],
    ['findings at --fail-on', () => ['publish', project({ 'install.py': 'import subprocess, sys\nsubprocess.check_call([sys.executable, "-m", "pip", "install", "numpy"])\n' }).dir, '--json'], 2],
    ['an archive over --max-size', () => ['publish', project().dir, '--max-size', '10', '--accept-findings'], 2],
    ['a publisher that does not exist', () => ['publish', project({}, 'nobody-here').dir], 5],
    ['a bad --max-size', () => ['publish', project().dir, '--max-size=lots'], 2],
  ])('%s', async (_name, argv, code) => {
    const { quick, program } = await both(argv());
    expect(program.code, program.stderr).toBe(code);
    expect(quick).toEqual(program);
  });

  it('without a token', async () => {
    const { quick, program } = await both(['publish', project().dir], { NODEREG_TOKEN: undefined });
    expect(program.code).toBe(4);
    expect(quick).toEqual(program);
  });

  it('publishes, and --skip-existing then reports the version as the full program does', async () => {
    const { id, dir } = project();
    const published = await runInProcess(['publish', dir, '--json'], { env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: token }, entry: 'quick-publish' });
    expect(published.code, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({ node_id: id, version: '1.0.0', status: 'NodeVersionStatusActive', skipped: false });
    const { quick, program } = await both(['publish', dir, '--skip-existing', '--json']);
    expect(program.code).toBe(0);
    expect(quick).toEqual(program);
    expect(JSON.parse(quick.stdout)).toMatchObject({ node_id: id, skipped: true });
  });
});
