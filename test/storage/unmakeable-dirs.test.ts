// A directory a user names where none can be made: Node's recursive mkdir spins forever under /proc
// (mkdir answers ENOENT though the parent exists). Every command that makes a directory from user
// input fails at once instead, naming the flag, argument or variable; a spin is killed by the timeout.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { PNG, runCli, startServer, tempDir, type TestServer } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';
import { createPublisher, createUser, publishAndUpload, type TestUser } from '../server/fixtures.js';

const NOWHERE = '/proc/nodereg-nowhere/deeper';

let server: TestServer;
let alice: TestUser;
let backup: string;
let project: string;
let image: string;

beforeAll(async () => {
  server = await startServer({ proxy: { sandboxDelay: 0 } });
  alice = await createUser(server, 'alice');
  await createPublisher(server, alice, 'acme');
  await publishAndUpload(server, alice.token, 'acme', 'ready', '1.0.0');
  backup = join(tempDir(), 'snapshot');
  expect((await runInProcess(['backup', backup, '--data-dir', server.dataDir])).code).toBe(0);
  project = writeTree(tempDir(), {
    'pyproject.toml': '[project]\nname = "demo-node"\nversion = "1.0.0"\n\n[tool.nodereg]\npublisher = "acme"\n',
    '__init__.py': '',
  });
  image = join(tempDir(), 'in.png');
  writeFileSync(image, PNG);
});
afterAll(() => server.close());

describe('a directory that cannot be made', () => {
  const registry = () => ({ NODEREG_REGISTRY: server.url, NODEREG_TOKEN: alice.token });
  const cases: [string, () => { args: string[]; env?: Record<string, string | undefined> }, number, string][] = [
    ['serve --data-dir', () => ({ args: ['serve', '--port', '0', '--data-dir', NOWHERE] }), 1, '(--data-dir)'],
    [
      'serve, data dir from XDG_DATA_HOME',
      () => ({ args: ['serve', '--port', '0'], env: { XDG_DATA_HOME: NOWHERE } }),
      1,
      '(XDG_DATA_HOME)',
    ],
    [
      'serve --storage',
      () => ({ args: ['serve', '--port', '0', '--data-dir', tempDir(), '--storage', NOWHERE] }),
      1,
      '--storage',
    ],
    ['pack --out', () => ({ args: ['pack', project, '--out', join(NOWHERE, 'a.zip')] }), 2, '--out:'],
    ['backup OUT', () => ({ args: ['backup', join(NOWHERE, 'b'), '--data-dir', server.dataDir] }), 2, 'OUT:'],
    [
      'restore --database',
      () => ({ args: ['restore', backup, '--database', join(NOWHERE, 'registry.db')] }),
      2,
      '--database:',
    ],
    [
      'node download --out',
      () => ({ args: ['node', 'download', 'ready', '--out', join(NOWHERE, 'r.zip')], env: registry() }),
      2,
      '--out:',
    ],
    [
      'node download --out DIR/',
      () => ({ args: ['node', 'download', 'ready', '--out', `${NOWHERE}/`], env: registry() }),
      2,
      '--out:',
    ],
    [
      'relight --output',
      () => ({ args: ['relight', image, '--prompt', 'warm', '--output', join(NOWHERE, 'out.png')], env: registry() }),
      2,
      '--output:',
    ],
    ['init DIR', () => ({ args: ['init', NOWHERE, '--publisher', 'acme', '--no-input'] }), 2, 'DIR:'],
    [
      'config from XDG_CONFIG_HOME',
      () => ({ args: ['config', 'set', 'registry', 'http://127.0.0.1:1'], env: { XDG_CONFIG_HOME: NOWHERE } }),
      2,
      'XDG_CONFIG_HOME:',
    ],
    [
      'config from HOME',
      () => ({
        args: ['config', 'set', 'registry', 'http://127.0.0.1:1'],
        env: { XDG_CONFIG_HOME: undefined, HOME: NOWHERE },
      }),
      2,
      'HOME:',
    ],
  ];

  it.each(cases)('%s: fails at once naming it', async (_name, make, code, named) => {
    const { args, env } = make();
    const result = await runInProcess(args, { env });
    expect(result.signal, 'killed after 20 s: it spun').toBeNull();
    expect(result.code, result.stderr).toBe(code);
    expect(result.stderr).toContain(named);
    expect(result.stderr).toContain(
      'cannot create the directory /proc/nodereg-nowhere: /proc does not take new directories',
    );
    expect(result.stderr).not.toMatch(/ENOENT|\n\s+at /);
  });
});

describe('a path as typed, refused before anything is made', () => {
  const long = 'n'.repeat(300);
  const cases: [string, string[], Record<string, string> | undefined, string, string][] = [
    [
      'pack --out=~/x.zip (the shell expands no ~ after =)',
      ['pack', '.', '--out=~/x.zip'],
      undefined,
      '--out: ~/x.zip starts with a ~ the shell did not expand',
      'write `--out ~/…` with a space',
    ],
    [
      'pack --out DIR\\ (a backslash is part of a name on Linux)',
      ['pack', '.', '--out', 'dist\\'],
      undefined,
      '--out: dist\\ ends with a backslash',
      'write dist/ for a directory',
    ],
    [
      'pack --out with a name too long',
      ['pack', '.', '--out', `${long}.zip`],
      undefined,
      '--out: the name nnnn',
      'choose a shorter name for --out',
    ],
    [
      'node download --out=~/r.zip',
      ['node', 'download', 'ready', '--out=~/r.zip'],
      undefined,
      '--out: ~/r.zip starts with a ~',
      'write `--out ~/…` with a space',
    ],
    [
      'serve --data-dir=~/data',
      ['serve', '--port', '0', '--data-dir=~/data'],
      undefined,
      '--data-dir: ~/data starts with a ~',
      'write `--data-dir ~/…` with a space',
    ],
    [
      'serve --data-dir DIR\\',
      ['serve', '--port', '0', '--data-dir', 'data\\'],
      undefined,
      '--data-dir: data\\ ends with a backslash',
      'write data/ for a directory',
    ],
    [
      'serve --data-dir with a name too long',
      ['serve', '--port', '0', '--data-dir', long],
      undefined,
      '--data-dir: the name nnnn',
      'choose a shorter name',
    ],
    [
      'backup --data-dir=~/data',
      ['backup', 'snap', '--data-dir=~/data'],
      undefined,
      '--data-dir: ~/data starts with a ~',
      'write `--data-dir ~/…` with a space',
    ],
    [
      'init DIR with a name too long (made, not typed as a flag)',
      ['init', long, '--name', 'demo', '--publisher', 'acme', '--no-input'],
      undefined,
      `DIR: cannot create the directory`,
      'point DIR at a directory you can write to',
    ],
    [
      'config, XDG_CONFIG_HOME="~/cfg"',
      ['config', 'set', 'registry', 'http://127.0.0.1:1'],
      { XDG_CONFIG_HOME: '~/cfg' },
      'XDG_CONFIG_HOME: ~/cfg starts with a ~',
      'set XDG_CONFIG_HOME=$HOME/…',
    ],
    [
      'serve, XDG_DATA_HOME="~/data"',
      ['serve', '--port', '0'],
      { XDG_DATA_HOME: '~/data' },
      'XDG_DATA_HOME: ~/data starts with a ~',
      'set XDG_DATA_HOME=$HOME/…',
    ],
  ];

  it.each(cases)('%s: exit 2 naming it and what to write, nothing made', async (_name, args, env, message, hint) => {
    const cwd = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "demo-node"\nversion = "1.0.0"\n\n[tool.nodereg]\npublisher = "acme"\n',
      '__init__.py': '',
    });
    const result = await runInProcess(args, { cwd, env: { NODEREG_REGISTRY: server.url, ...env } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`error: ${message}`);
    expect(result.stderr).toContain(`hint: ${hint}`);
    expect(result.stderr).not.toMatch(/ENAMETOOLONG|\n\s+at /);
    expect(readdirSync(cwd).sort()).toEqual(['__init__.py', 'pyproject.toml']);
  });
});
