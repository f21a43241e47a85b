// `nodereg config get|set|list` run in-process, with a temporary HOME and XDG_CONFIG_HOME.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/program.js';
import { checkHints } from './hint-check.js';

const TOKEN = 'nrg_u_s3cretTOKENvalue_9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const SECRET_PART = 's3cretTOKENvalue';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let home: string;

function sink() {
  const s = {
    buf: '',
    write(chunk: string) {
      s.buf += chunk;
      return true;
    },
  };
  return s;
}

async function cli(argv: string[], stdinText?: string): Promise<Result> {
  const stdout = sink();
  const stderr = sink();
  const code = await run(argv, '0.0.0-test', {
    env: { HOME: home, XDG_CONFIG_HOME: join(home, 'cfg'), NO_COLOR: '1' },
    stdout,
    stderr,
    stdin: Readable.from(stdinText === undefined ? [] : [stdinText]),
    interactive: false,
  });
  await checkHints(stdout.buf, stderr.buf);
  return { code, stdout: stdout.buf, stderr: stderr.buf };
}

const configFile = () => join(home, 'cfg', 'nodereg', 'config.json');
const mode = (path: string) => statSync(path).mode & 0o777;

function expectNoToken(result: Result, what: string): void {
  for (const [name, text] of [
    ['stdout', result.stdout],
    ['stderr', result.stderr],
  ] as const) {
    expect(text, `${what}: ${name}`).not.toContain(TOKEN);
    expect(text, `${what}: ${name}`).not.toContain(SECRET_PART);
  }
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'nodereg-config-test-'));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

describe('config set / get registry', () => {
  it('stores the registry and reads it back', async () => {
    const set = await cli(['config', 'set', 'registry', 'http://127.0.0.1:4999']);
    expect(set.code).toBe(0);
    expect(set.stdout).toBe('');
    const get = await cli(['config', 'get', 'registry']);
    expect(get).toMatchObject({ code: 0, stdout: 'http://127.0.0.1:4999\n' });
    expect(JSON.parse(readFileSync(configFile(), 'utf8')).profiles.default.registry).toBe('http://127.0.0.1:4999');
  });

  it('keeps profiles apart', async () => {
    expect((await cli(['--profile', 'work', 'config', 'set', 'registry', 'http://127.0.0.1:5001'])).code).toBe(0);
    expect((await cli(['config', 'set', 'registry', 'http://127.0.0.1:5002'])).code).toBe(0);
    expect((await cli(['config', 'get', 'registry', '--profile', 'work'])).stdout).toBe('http://127.0.0.1:5001\n');
    expect((await cli(['config', 'get', 'registry'])).stdout).toBe('http://127.0.0.1:5002\n');
  });

  it('rejects a registry that is not an http(s) URL with exit 2, with the URL written whole in the hint', async () => {
    for (const [value, whole] of [
      ['not a url', 'http://127.0.0.1:4880'],
      // `new URL` reads these as a scheme and a path: every command would refuse them later
      ['registry.example.com:8443', 'https://registry.example.com:8443'],
      ['localhost:4880', 'http://localhost:4880'],
    ]) {
      const result = await cli(['config', 'set', 'registry', value]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `registry "${value}" is not an http:// or https:// URL\nhint: nodereg config set registry ${whole}\n`,
      );
      expect(
        existsSync(configFile()) && JSON.parse(readFileSync(configFile(), 'utf8')).profiles?.default?.registry,
      ).toBeFalsy();
    }
  });

  it('an unknown --profile is an error naming the profiles that exist (config list listed the others silently)', async () => {
    expect((await cli(['--profile', 'work', 'config', 'set', 'registry', 'http://127.0.0.1:5001'])).code).toBe(0);
    expect((await cli(['config', 'set', 'registry', 'http://127.0.0.1:5002'])).code).toBe(0);
    for (const argv of [
      ['--profile', 'missing', 'config', 'list'],
      ['--profile', 'missing', 'config', 'get', 'registry'],
    ]) {
      const result = await cli(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('there is no profile named "missing" (profiles: work, default)');
    }
    // set makes the profile; then it is listed
    expect((await cli(['--profile', 'missing', 'config', 'set', 'registry', 'http://127.0.0.1:5003'])).code).toBe(0);
    expect((await cli(['--profile', 'missing', 'config', 'list'])).code).toBe(0);
  });

  it('prints an empty value for an unset key', async () => {
    const get = await cli(['config', 'get', 'registry']);
    expect(get.code).toBe(0);
    expect(get.stdout.trim()).toBe('');
  });
});

describe('config set token', () => {
  it('reads the token from stdin and writes the config file with mode 0600', async () => {
    const set = await cli(['config', 'set', 'token'], `${TOKEN}\n`);
    expect(set.code).toBe(0);
    expect(mode(configFile())).toBe(0o600);
    expect(JSON.parse(readFileSync(configFile(), 'utf8')).profiles.default.token).toBe(TOKEN);
    expectNoToken(set, 'config set token');
  });

  it('re-applies 0600 when the file was made 0644', async () => {
    expect((await cli(['config', 'set', 'token'], TOKEN)).code).toBe(0);
    chmodSync(configFile(), 0o644);
    expect(mode(configFile())).toBe(0o644);
    expect((await cli(['config', 'set', 'token'], TOKEN)).code).toBe(0);
    expect(mode(configFile())).toBe(0o600);

    chmodSync(configFile(), 0o644);
    expect((await cli(['config', 'set', 'registry', 'http://127.0.0.1:4880'])).code).toBe(0);
    expect(mode(configFile())).toBe(0o600);
  });

  it('fails with exit 2 when stdin is empty', async () => {
    const result = await cli(['config', 'set', 'token'], '  \n');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/stdin/);
  });

  it('never shows the token, in any command or mode', async () => {
    const runs: [string, Result][] = [];
    runs.push(['set (stdin)', await cli(['config', 'set', 'token'], TOKEN)]);
    runs.push(['set (stdin) --verbose', await cli(['--verbose', 'config', 'set', 'token'], TOKEN)]);
    runs.push(['set (stdin) --json', await cli(['config', 'set', 'token', '--json'], TOKEN)]);
    runs.push(['set (argument) --verbose', await cli(['config', 'set', 'token', TOKEN, '--verbose'])]);
    runs.push(['get token', await cli(['config', 'get', 'token'])]);
    runs.push(['get token --verbose', await cli(['config', 'get', 'token', '--verbose'])]);
    runs.push(['get token --json', await cli(['--json', 'config', 'get', 'token'])]);
    runs.push(['list', await cli(['config', 'list'])]);
    runs.push(['list --json', await cli(['config', 'list', '--json'])]);
    runs.push(['list --json --verbose', await cli(['config', 'list', '--json', '--verbose'])]);
    for (const [what, result] of runs) {
      expect(result.code, what).toBe(0);
      expectNoToken(result, what);
    }
    // the token is there, only hidden: get shows that one is set, and its kind
    const get = runs.find(([w]) => w === 'get token')![1];
    expect(get.stdout).toContain('nrg_u_');
    expect(get.stdout).toMatch(/redacted/);
    const list = JSON.parse(runs.find(([w]) => w === 'list --json')![1].stdout);
    expect(list.profiles).toEqual([{ name: 'default', registry: '', token: expect.stringMatching(/redacted/) }]);
    expect(list.path).toBe(configFile());
  });
});

describe('the config file', () => {
  it('reads a file the earlier conf-based versions wrote, and keeps keys it does not know', async () => {
    mkdirSync(join(home, 'cfg', 'nodereg'), { recursive: true });
    const earlier = {
      __internal__: { migrations: { version: '0.1.0' } },
      profiles: { default: { registry: 'http://127.0.0.1:9/' } },
    };
    writeFileSync(configFile(), JSON.stringify(earlier, undefined, '\t'), { mode: 0o600 });
    expect((await cli(['config', 'get', 'registry'])).stdout.trim()).toBe('http://127.0.0.1:9/');
    expect((await cli(['config', 'set', 'registry', 'http://127.0.0.1:8/', '--profile', 'other'])).code).toBe(0);
    const saved = JSON.parse(readFileSync(configFile(), 'utf8'));
    expect(saved.__internal__).toEqual(earlier.__internal__);
    expect(saved.profiles).toEqual({
      default: { registry: 'http://127.0.0.1:9/' },
      other: { registry: 'http://127.0.0.1:8/' },
    });
    expect(mode(configFile())).toBe(0o600);
  });

  it('names a file that is not JSON and exits 2', async () => {
    mkdirSync(join(home, 'cfg', 'nodereg'), { recursive: true });
    writeFileSync(configFile(), '{"profiles": ');
    const result = await cli(['config', 'get', 'registry']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(configFile());
  });
});

describe('errors and help', () => {
  it('config set bogus x exits 2 and names the key', async () => {
    const result = await cli(['config', 'set', 'bogus', 'x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bogus');
    expect(result.stdout).toBe('');
  });

  it('config get bogus exits 2 and names the key', async () => {
    const result = await cli(['config', 'get', 'bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bogus');
  });

  it('an unknown command exits 2 with "Did you mean"', async () => {
    const result = await cli(['confg']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Did you mean');
    expect(result.stderr).toContain('config');
  });

  it('an unknown subcommand of config exits 2', async () => {
    const result = await cli(['config', 'lst']);
    expect(result.code).toBe(2);
  });

  it('--help exits 0 and lists the commands on stdout', async () => {
    const result = await cli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\s+config\s/m);
    expect(result.stdout).toMatch(/^\s+openapi\s/m);
    expect(result.stdout).toContain('Usage: nodereg');
    expect(result.stderr).toBe('');
  });

  it('config --help exits 0 and lists get, set and list', async () => {
    const result = await cli(['config', '--help']);
    expect(result.code).toBe(0);
    for (const sub of ['get', 'set', 'list']) expect(result.stdout).toMatch(new RegExp(`^\\s+${sub}\\b`, 'm'));
  });

  it('--version prints the version given to run', async () => {
    const result = await cli(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('0.0.0-test');
  });
});

describe('--json prints exactly one JSON document on stdout', () => {
  const cases: [string, string[], number, string | undefined][] = [
    ['config get registry', ['--json', 'config', 'get', 'registry'], 0, undefined],
    ['config set registry', ['config', 'set', 'registry', 'http://127.0.0.1:4880', '--json'], 0, undefined],
    ['config set token', ['config', 'set', 'token', '--json'], 0, TOKEN],
    ['config list', ['config', 'list', '--json'], 0, undefined],
    ['config set bogus (error)', ['config', 'set', 'bogus', 'x', '--json'], 2, undefined],
    ['unknown command (error)', ['--json', 'confg'], 2, undefined],
  ];
  it.each(cases)('%s', async (_what, argv, code, stdin) => {
    const result = await cli(argv, stdin);
    expect(result.code).toBe(code);
    expect(result.stdout.trim()).not.toBe('');
    const parsed = JSON.parse(result.stdout); // throws on zero or two documents, or any stray text
    expect(typeof parsed).toBe('object');
    expect(parsed).not.toBeNull();
    if (code !== 0) expect(parsed.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    expectNoToken(result, argv.join(' '));
  });

  it('config get registry --json carries the value', async () => {
    await cli(['config', 'set', 'registry', 'http://127.0.0.1:4998']);
    const parsed = JSON.parse((await cli(['config', 'get', 'registry', '--json'])).stdout);
    expect(parsed).toEqual({ profile: 'default', key: 'registry', value: 'http://127.0.0.1:4998' });
  });
});
