// What a first-time user meets: the CLI in-process against a real registry (npm start spawned), one
// check per trap — downloads into a new dir, hints that are right and run as printed, names that line
// up, plain sentences instead of raw errors.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asInvoked, invocation } from '../../src/cli/invocation.js';
import { runInProcess } from './in-process.js';
import { runHints } from './hints.js';
import { cliEnv, PNG, runCli, startServer, tempDir, type TestServer } from '../helpers.js';
import { call, createPublisher, createUser, publish, publishAndUpload, type TestUser } from '../server/fixtures.js';

const ROOT = resolve(import.meta.dirname, '../..');

let server: TestServer;
let alice: TestUser;
/** The server's access log: `GET /path 200 1.2ms` per request. */
const requests: string[] = [];
const env = () => ({ NODEREG_REGISTRY: server.url, NODEREG_TOKEN: alice.token });

beforeAll(async () => {
  server = await startServer({ proxy: { sandboxDelay: 0 }, accessLog: (line) => requests.push(line) });
  alice = await createUser(server, 'alice');
  await createPublisher(server, alice, 'acme');
  await publishAndUpload(server, alice.token, 'acme', 'ready', '1.0.0');
  // a version registered without its archive: the node has no active version
  expect((await publish(server, alice.token, 'acme', 'half', '1.0.0')).status).toBe(201);
});
afterAll(() => server.close());

describe('downloads', () => {
  it('--out into a dir that does not exist yet creates it, and the download counts once', async () => {
    const out = join(tempDir(), 'vendor', 'nodes', 'ready.zip');
    const result = await runInProcess(['node', 'download', 'ready', '--out', out], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(out)).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    expect((await call(server.url, 'GET', '/nodes/ready')).body.downloads).toBe(1);
  });

  it('--out naming a directory writes <nodeId>-<version>.zip into it; an unwritable --out is named in plain words', async () => {
    const dir = tempDir();
    const into = await runInProcess(['node', 'download', 'ready', '--out', dir], { env: env() });
    expect(into.code, into.stderr).toBe(0);
    expect(existsSync(join(dir, 'ready-1.0.0.zip'))).toBe(true);
    expect(into.stdout).toContain(`to ${join(dir, 'ready-1.0.0.zip')}`);
    const blocked = await runInProcess(['node', 'download', 'ready', '--out', join(dir, 'ready-1.0.0.zip', 'x.zip')], {
      env: env(),
    });
    expect(blocked.code, blocked.stderr).toBe(2);
    expect(blocked.stderr).toContain(
      `--out: cannot create the directory ${join(dir, 'ready-1.0.0.zip')}: ${join(dir, 'ready-1.0.0.zip')} is a file, not a directory`,
    );
    expect(blocked.stderr).not.toMatch(/ENOTDIR|EEXIST/);
    // a path ending in / names a directory, made when missing
    const made = await runInProcess(['node', 'download', 'ready', '--out', `${join(dir, 'vendor', 'nodes')}/`], {
      env: env(),
    });
    expect(made.code, made.stderr).toBe(0);
    expect(existsSync(join(dir, 'vendor', 'nodes', 'ready-1.0.0.zip'))).toBe(true);
    const under = await runInProcess(
      ['node', 'download', 'ready', '--out', `${join(dir, 'ready-1.0.0.zip', 'sub')}/`],
      { env: env() },
    );
    expect(under.code, under.stderr).toBe(2);
    expect(under.stderr).toContain(
      `--out: cannot create the directory ${join(dir, 'ready-1.0.0.zip')}: ${join(dir, 'ready-1.0.0.zip')} is a file, not a directory`,
    );
    expect(under.stderr).not.toMatch(/ENOTDIR|EEXIST|at .*\.js/);
  });

  it('a node without an active version: exit 5, and the hint lists its versions (not a search)', async () => {
    const result = await runInProcess(['node', 'download', 'half'], { env: env() });
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('hint: it has no active version yet');
    expect(result.stderr).toContain('`nodereg node versions half`');
    expect(result.stderr).not.toContain('node search');
    const unknown = await runInProcess(['node', 'download', 'nowhere'], { env: env() });
    expect(unknown.stderr).toContain('`nodereg node search nowhere`');
    // as printed, each lists what the hint says: half's versions, and a search that finds nothing
    const [versions] = await runHints(result.stderr, { env: env() });
    expect(versions.result.code, versions.result.stderr).toBe(0);
    expect(versions.result.stdout).toContain('1.0.0');
    const [search] = await runHints(unknown.stderr, { env: env() });
    expect(search.argv).toEqual(['node', 'search', 'nowhere']);
    expect(search.result.code, search.result.stderr).toBe(0);
  });

  it('a version that does not exist is named as missing, not as "not active"; one registered without its archive is not active', async () => {
    const missing = await runInProcess(['node', 'download', 'ready@9.9.9'], { env: env() });
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain(
      'hint: ready has no version 9.9.9: list its versions with `nodereg node versions ready`\n',
    );
    const [listed] = await runHints(missing.stderr, { env: env() });
    expect(listed.result.code, listed.result.stderr).toBe(0);
    expect(listed.result.stdout).toContain('1.0.0');
    const pending = await runInProcess(['node', 'download', 'half@1.0'], { env: env() });
    expect(pending.code).toBe(5);
    expect(pending.stderr).toContain(
      'hint: version 1.0.0 is not active: a version is active once its archive is uploaded',
    );
  });

  it('a version that is not active downloads for a member and an admin by name (size and SHA-256 checked); others get the hint', async () => {
    const uploaded = await publishAndUpload(server, alice.token, 'acme', 'held', '2.0.0');
    const flagged = await call(server.url, 'PUT', '/publishers/acme/nodes/held/versions/2.0.0', {
      token: server.adminToken,
      body: { status: 'NodeVersionStatusFlagged' },
    });
    expect(flagged.status, flagged.text).toBe(200);
    for (const token of [alice.token, server.adminToken]) {
      const dir = tempDir();
      const result = await runInProcess(['node', 'download', 'held@2.0.0', '--out', `${dir}/`, '--json'], {
        env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: token },
      });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        version: '2.0.0',
        archive_sha256: uploaded.archive_sha256,
        size: uploaded.archive_size,
      });
      expect(result.stderr).toContain('held 2.0.0 is not active (NodeVersionStatusFlagged)');
      expect(existsSync(join(dir, 'held-2.0.0.zip'))).toBe(true);
    }
    const stranger = await createUser(server, 'stranger');
    for (const token of [stranger.token, undefined]) {
      const result = await runInProcess(['node', 'download', 'held@2.0.0', '--out', `${tempDir()}/`], {
        env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: token },
      });
      expect(result.code, result.stderr).toBe(5);
      expect(result.stderr).toContain(
        'hint: version 2.0.0 is not active: a version is active once its archive is uploaded',
      );
    }
  });
});

describe('download requests', () => {
  /** The download of `spec`, and the requests the registry received for it (method and path). */
  async function asked(spec: string, token?: string) {
    requests.length = 0;
    const result = await runInProcess(['node', 'download', spec, '--out', `${tempDir()}/`], {
      env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: token },
    });
    await new Promise((r) => setTimeout(r, 50)); // a line is written once its answer is
    return { result, paths: requests.map((line) => line.split(' ').slice(0, 2).join(' ')) };
  }

  it('asks only what the download, or the hint it shows, needs: a version read already is not asked for again, and no hint for an error that shows none', async () => {
    const ok = await asked('ready');
    expect(ok.result.code, ok.result.stderr).toBe(0);
    expect(ok.paths).toEqual(['GET /nodes/ready/install', 'GET /archives/acme/ready/1.0.0/node.zip']);

    // the hint tells a missing version from one not active: it needs the node and its versions
    const missing = await asked('ready@9.9.9');
    expect(missing.result.code).toBe(5);
    expect(missing.paths).toEqual(['GET /nodes/ready/install', 'GET /nodes/ready', 'GET /nodes/ready/versions']);

    // a member's version without its archive: read once, which says the node and the version exist
    const member = await asked('half@1.0.0', alice.token);
    expect(member.result.code).toBe(5);
    expect(member.result.stderr).toContain(
      'hint: version 1.0.0 is not active: a version is active once its archive is uploaded',
    );
    expect(member.paths).toEqual(['GET /nodes/half/install', 'GET /nodes/half/versions/1.0.0']);

    // a flagged version the archive route hides from a stranger
    await publishAndUpload(server, alice.token, 'acme', 'flagged', '2.0.0');
    expect(
      (
        await call(server.url, 'PUT', '/publishers/acme/nodes/flagged/versions/2.0.0', {
          token: server.adminToken,
          body: { status: 'NodeVersionStatusFlagged' },
        })
      ).status,
    ).toBe(200);
    const outsider = await createUser(server, 'outsider');
    const hidden = await asked('flagged@2.0.0', outsider.token);
    expect(hidden.result.code).toBe(5);
    expect(hidden.result.stderr).toContain('hint: version 2.0.0 is not active');
    expect(hidden.paths).toEqual([
      'GET /nodes/flagged/install',
      'GET /nodes/flagged/versions/2.0.0',
      'GET /archives/acme/flagged/2.0.0/node.zip',
    ]);

    // a banned node: the 403's own hint is shown, so nothing is asked for a 404's
    await publishAndUpload(server, alice.token, 'acme', 'gone', '1.0.0');
    expect(
      (
        await call(server.url, 'PUT', '/publishers/acme/nodes/gone', {
          token: server.adminToken,
          body: { status: 'NodeStatusBanned' },
        })
      ).status,
    ).toBe(200);
    const banned = await asked('gone@1.0.0');
    expect(banned.result.stderr).toContain('error: node gone is banned');
    expect(banned.result.stderr).toContain('hint: a registry admin banned it');
    expect(banned.paths).toEqual(['GET /nodes/gone/install']);
  });
});

describe('names that line up', () => {
  it('a node without reviews says so, rather than "0.0 / 5"', async () => {
    const result = await runInProcess(['node', 'show', 'ready'], { env: env() });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/rating:?\s+no reviews yet/);
    expect(result.stdout).not.toContain('0.0 / 5');
  });

  it('version update takes 1.0 for 1.0.0, as publish does', async () => {
    const result = await runInProcess(['version', 'update', 'ready', '1.0', '--changelog', 'short form'], {
      env: env(),
    });
    expect(result.code, result.stderr).toBe(0);
    expect((await call(server.url, 'GET', '/nodes/ready/versions/1.0.0')).body.changelog).toBe('short form');
  });

  it('task status takes the command name skin-enhance as well as the kind skin-enhancer', async () => {
    const started = await call(server.url, 'POST', '/proxy/img/v1/ai/skin-enhancer/flexible', {
      token: alice.token,
      body: { image: PNG.toString('base64') },
    });
    expect(started.status).toBe(200);
    const result = await runInProcess(['task', 'status', 'skin-enhance', started.body.data.task_id], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`skin-enhancer task ${started.body.data.task_id}`);
  });

  it('config list says where the config file is', async () => {
    const home = tempDir('nodereg-home-');
    expect((await runInProcess(['--profile', 'work', 'config', 'set', 'registry', server.url], { home })).code).toBe(0);
    const result = await runInProcess(['config', 'list'], { home });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`config file: ${join(home, '.config', 'nodereg', 'config.json')}`);
  });
});

describe('plain sentences', () => {
  it('--registry without a scheme names the flag and shows the URL to write, with no "is it running" hint', async () => {
    const result = await runInProcess(['node', 'show', 'ready', '--registry', '127.0.0.1:4889']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: --registry "127.0.0.1:4889" is not an http:// or https:// URL');
    expect(result.stderr).toContain('http://127.0.0.1:4889');
    expect(result.stderr).not.toMatch(/ERR_INVALID_URL|running/);
  });

  it('validate of a dir that does not exist says so', async () => {
    const cwd = tempDir();
    const result = await runInProcess(['validate', 'nosuchdir', '--offline'], { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: nosuchdir does not exist');
    expect(result.stderr).not.toContain('ENOENT');
  });

  it('an unknown --profile is an error naming it, not a silent "no token"', async () => {
    const home = tempDir('nodereg-home-');
    expect((await runInProcess(['--profile', 'work', 'config', 'set', 'registry', server.url], { home })).code).toBe(0);
    const result = await runInProcess(['--profile', 'wrok', 'whoami'], { home });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('there is no profile named "wrok" (profiles: work)');
    const viaEnv = await runInProcess(['whoami'], { home, env: { NODEREG_PROFILE: 'wrok' } });
    expect(viaEnv.stderr).toContain('there is no profile named "wrok"');
  });
});

describe('hints that run as printed', () => {
  it('says how the CLI was started: nodereg from PATH, npx nodereg from node_modules/.bin, else node <script>', () => {
    expect(invocation('/usr/local/bin/nodereg', { PATH: '/usr/bin:/usr/local/bin' }, '/home/a')).toBe('nodereg');
    expect(invocation('/home/a/proj/node_modules/.bin/nodereg', { PATH: '/usr/bin' }, '/home/a/proj')).toBe(
      'npx nodereg',
    );
    expect(invocation('/home/a/nodereg/bin/nodereg.js', { PATH: '/usr/bin' }, '/home/a/nodereg')).toBe(
      'node bin/nodereg.js',
    );
    expect(invocation('/opt/nodereg/bin/nodereg.js', { PATH: '/usr/bin' }, '/home/a')).toBe(
      'node /opt/nodereg/bin/nodereg.js',
    );
    expect(
      asInvoked('run `nodereg login`; or: nodereg whoami\n  nodereg publish x | nodereg y', 'node bin/nodereg.js'),
    ).toBe(
      'run `node bin/nodereg.js login`; or: node bin/nodereg.js whoami\n  node bin/nodereg.js publish x | node bin/nodereg.js y',
    );
    expect(asInvoked('an example node, seeded by nodereg serve --seed', 'npx nodereg')).toBe(
      'an example node, seeded by nodereg serve --seed',
    );
    // The global flags typed go into every command, unless it names them itself or works on a data dir.
    const typed = [
      ['--profile', 'ci bot'],
      ['--registry', 'http://r.example'],
    ] as const;
    expect(
      asInvoked(
        '`nodereg publisher create x`, `nodereg login --profile b`, `nodereg serve`; or: nodereg whoami',
        'nodereg',
        typed,
      ),
    ).toBe(
      "`nodereg publisher create x --profile 'ci bot' --registry http://r.example`, `nodereg login --profile b --registry http://r.example`, `nodereg serve`; or: nodereg --profile 'ci bot' --registry http://r.example whoami",
    );
  });

  it('npm start in a checkout prints commands as `node bin/nodereg.js …`, which run there', async () => {
    const home = tempDir('nodereg-home-');
    // its own process group: npm does not pass SIGTERM on to the server it started, so the group is stopped
    const child = spawn('npm', ['start', '--', '--port', '0', '--data-dir', join(home, 'data'), '--log', 'off'], {
      cwd: ROOT,
      env: cliEnv(home),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    try {
      for (let i = 0; i < 300 && !stderr.includes('Browse:'); i++) await new Promise((r) => setTimeout(r, 50));
      expect(stderr, stderr).toContain('  node bin/nodereg.js publisher create my-publisher');
      expect(stderr).toContain('  node bin/nodereg.js publish path/to/my-node');
      expect(stderr).not.toMatch(/(^|\s)nodereg (publisher|init|publish|node) /m);
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((r) => child.on('close', r));
    }
  });

  it('a checkout that was never built says to run npm ci, without a stack trace', async () => {
    const checkout = tempDir('nodereg-checkout-');
    cpSync(join(ROOT, 'bin'), join(checkout, 'bin'), { recursive: true }); // the launcher and bin/package.json (CommonJS)
    cpSync(join(ROOT, 'package.json'), join(checkout, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
    const result = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = spawn('npm', ['start'], {
        cwd: checkout,
        env: cliEnv(tempDir()),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (code) => done({ code, stderr }));
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('error: nodereg is not built yet: dist/cli/main.js is missing');
    expect(result.stderr).toContain('hint: run `npm ci`');
    expect(result.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|    at /);
    expect(readFileSync(join(checkout, 'package.json'), 'utf8')).toContain('"start"');
  });
});

describe('an id typed where a command goes', () => {
  it('`node ID`, `version ID`, `publisher ID` and `publisher members ID` exit 2 and name the read that shows it (members ID said "Did you mean add?" alone)', async () => {
    const cases: [string[], string][] = [
      [['node', 'ready'], "hint: if ready is a node's id, `nodereg node show ready` shows it"],
      [['version', 'ready'], "hint: if ready is a node's id, `nodereg node versions ready` lists its versions"],
      [['publisher', 'acme'], "hint: if acme is a publisher's id, `nodereg publisher show acme` shows it"],
      [
        ['publisher', 'members', 'acme'],
        "hint: if acme is a publisher's id, `nodereg publisher show acme` shows it and its members",
      ],
    ];
    for (const [args, hint] of cases) {
      const result = await runInProcess(args, { env: env() });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(hint);
      const shown = await runInProcess(hint.replace(/^.*`nodereg (.*)`.*$/, '$1').split(' '), { env: env() });
      expect(shown.code, shown.stderr).toBe(0);
    }
    const json = await runInProcess(['--json', 'node', 'ready'], { env: env() });
    expect(JSON.parse(json.stdout)).toEqual({
      error: {
        code: 'invalid_input',
        message: "unknown command 'ready'",
        hint: "if ready is a node's id, `nodereg node show ready` shows it",
      },
    });
    // a typo of a command keeps commander's suggestion
    expect((await runInProcess(['node', 'shwo', 'ready'], { env: env() })).stderr).toContain('(Did you mean show?)');
  });
});
