// `nodereg serve` and `nodereg backup` as a user runs them, with temp HOME/XDG dirs, talking to
// 127.0.0.1 only: a serve that keeps running is spawned (it is stopped by a signal); the runs that end
// (refusals, backups, the client commands around them) run in-process.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import yazl from 'yazl';
import { runCli, startServer, tempDir } from '../helpers.js';
import { openDatabase } from '../../src/server/store/db.js';
import { migrations } from '../../src/server/store/migrations.js';
import { runInProcess } from '../cli/in-process.js';
import { useServe } from './serve-helper.js';

const serve = useServe();

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

async function exampleZip(): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from('[project]\nname = "slow-node"\nversion = "1.0.0"\n'), 'pyproject.toml');
  zip.addBuffer(Buffer.alloc(200_000, 'x'), 'slow_node/data.txt', { compress: false });
  zip.end();
  return buffer(zip.outputStream);
}

function integrity(dbPath: string): string {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.pragma('integrity_check', { simple: true }) as string;
  } finally {
    db.close();
  }
}

describe('nodereg serve', () => {
  it('prints only the URL line on stdout, serves, and closes cleanly on SIGTERM; a restart keeps the data dir', async () => {
    const dataDir = join(tempDir(), 'data');
    const first = await serve(['--port', '0', '--data-dir', dataDir]);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${first.url}/healthz`);
    expect(health.status).toBe(200);
    expect(first.stderr()).toContain(`callback key for webhook receivers: ${join(dataDir, 'callback-key')}`);
    const secret = readFileSync(join(dataDir, 'secret'), 'utf8');

    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(first.stdout()).toBe(`nodereg registry listening on ${first.url}\n`);
    expect(first.stderr()).toMatch(/GET \/healthz 200/);
    // closed cleanly: the WAL was checkpointed and removed
    expect(existsSync(join(dataDir, 'registry.db-wal'))).toBe(false);
    expect(integrity(join(dataDir, 'registry.db'))).toBe('ok');

    const second = await serve(['--port', '0', '--data-dir', dataDir]);
    expect(readFileSync(join(dataDir, 'secret'), 'utf8')).toBe(secret);
    expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
    expect(await second.stop('SIGINT')).toEqual({ code: 0, signal: null });
    expect(second.stdout()).toBe(`nodereg registry listening on ${second.url}\n`);
  });

  it('--database and --storage (or their environment variables) put the database and the archives where they say, and close cleanly', async () => {
    const dataDir = join(tempDir(), 'data');
    const elsewhere = tempDir();
    const served = await serve(
      ['--port', '0', '--data-dir', dataDir, '--database', `sqlite:${join(elsewhere, 'db.sqlite')}`],
      {
        env: { NODEREG_STORAGE_URL: join(elsewhere, 'archives') },
      },
    );
    expect((await fetch(`${served.url}/healthz`)).status).toBe(200);
    expect(served.stderr()).toContain(`database: ${join(elsewhere, 'db.sqlite')}`);
    expect(served.stderr()).toContain(`archives: ${join(elsewhere, 'archives')}`);
    expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(integrity(join(elsewhere, 'db.sqlite'))).toBe('ok');
    expect(existsSync(join(elsewhere, 'archives'))).toBe(true);
    expect(readdirSync(dataDir).filter((name) => name.startsWith('registry.db') || name === 'archives')).toEqual([]);
  });

  it('refuses a database or storage URL it cannot use before starting, naming the flag or variable (exit 2)', async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--database', 'mysql://h/db'], {}, /--database: "mysql:" is not a database/],
      [
        [],
        { NODEREG_DATABASE_URL: 'postgres:///db' },
        /NODEREG_DATABASE_URL: "postgres:\/\/\/db" is not a PostgreSQL URL/,
      ],
      [['--storage', 's3://Bad_Bucket/x'], {}, /--storage: "Bad_Bucket" is not an S3 bucket name/],
      [['--storage', 'ftp://h/x'], {}, /--storage: "ftp:" is not a storage/],
      [
        ['--storage', 's3://some-bucket/x', '--max-archive', '6GiB'],
        {},
        /--max-archive must be at most 5GiB with S3 storage/,
      ],
      [
        ['--database', 'postgres://u@127.0.0.1:1/db'],
        {},
        /with --database postgres:\/\/… and no --data-dir, --storage \(or NODEREG_STORAGE_URL\) must say where archives live/,
      ],
      [
        ['--database', 'postgres://u@127.0.0.1:1/db', '--storage', '/tmp/x'],
        {},
        /with --database postgres:\/\/… and no --data-dir, set NODEREG_ADMIN_TOKEN/,
      ],
    ];
    for (const [args, env, message] of cases) {
      const dataDir = args.includes('--database') ? [] : ['--data-dir', tempDir()];
      const result = await runInProcess(['serve', '--port', '0', ...dataDir, ...args], { env });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
  });

  it('a PostgreSQL URL it cannot parse is refused without printing its password (serve, restore, backup)', async () => {
    // Both fail to parse: a doubled @, and a / in the password (not percent-encoded).
    for (const url of ['postgres://u:hunter2@@/db', 'postgres://u:hunt/er2@127.0.0.1/db']) {
      for (const args of [
        ['serve', '--port', '0', '--database', url],
        ['restore', tempDir(), '--database', url, '--storage', tempDir()],
        ['backup', join(tempDir(), 'out'), '--database', url],
      ]) {
        const result = await runInProcess(args);
        expect(result.code, `${args[0]} ${url}`).toBe(2);
        expect(result.stderr).toMatch(/--database: .* is not a PostgreSQL URL/);
        expect(result.stderr + result.stdout).not.toMatch(/hunt/);
      }
    }
  });

  it('backup of a PostgreSQL registry explains pg_dump and bucket versioning and exits 2; of --database sqlite:PATH copies that file', async () => {
    const pg = await runInProcess(['backup', join(tempDir(), 'out')], {
      env: { NODEREG_DATABASE_URL: 'postgresql://u:p@127.0.0.1:1/db' },
    });
    expect(pg.code).toBe(2);
    expect(pg.stderr).toMatch(/pg_dump/);
    expect(pg.stderr).toMatch(/versioning of the bucket/);

    const elsewhere = tempDir();
    openDatabase(join(elsewhere, 'db.sqlite')).close();
    const out = join(tempDir(), 'out');
    const copied = await runInProcess([
      'backup',
      out,
      '--data-dir',
      tempDir(),
      '--database',
      `sqlite:${join(elsewhere, 'db.sqlite')}`,
    ]);
    expect(copied.stderr).toBe('');
    expect(copied.code).toBe(0);
    expect(integrity(join(out, 'registry.db'))).toBe('ok');
  });

  it('writes every line as JSON with --log json (start-up, access, closing, the URL line), and no access log with --log off', async () => {
    const dataDir = tempDir();
    const json = await serve(['--port', '0', '--data-dir', dataDir, '--log', 'json']);
    await fetch(`${json.url}/healthz`);
    await fetch(`${json.url}/no-such-route`);
    expect((await json.stop()).code).toBe(0);
    const parsed = (text: string) =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const lines = parsed(json.stderr());
    for (const line of lines)
      expect(line).toEqual(expect.objectContaining({ time: expect.any(String), level: expect.any(String) }));
    expect(lines).toContainEqual(expect.objectContaining({ method: 'GET', path: '/healthz', status: 200 }));
    expect(lines).toContainEqual(expect.objectContaining({ method: 'GET', path: '/no-such-route', status: 404 }));
    expect(lines).toContainEqual(expect.objectContaining({ level: 'info', message: `data dir: ${dataDir}` }));
    // No secret in a JSON log (it is kept and shipped): the generated admin token stays in its file.
    expect(lines).toContainEqual(
      expect.objectContaining({
        message: `admin token generated into ${join(dataDir, 'admin-token')} (not written to a JSON log; read it there)`,
      }),
    );
    for (const secret of ['admin-token', 'secret', 'callback-key'].map((file) =>
      readFileSync(join(dataDir, file), 'utf8').trim(),
    ))
      expect(json.stderr() + json.stdout()).not.toContain(secret);
    expect(lines).toContainEqual(expect.objectContaining({ message: expect.stringMatching(/^SIGTERM: closing/) }));
    expect(parsed(json.stdout())).toEqual([
      expect.objectContaining({ level: 'info', message: `nodereg registry listening on ${json.url}`, url: json.url }),
    ]);

    // A start that fails says so in JSON too.
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const failed = await runInProcess([
        'serve',
        '--port',
        String((blocker.address() as { port: number }).port),
        '--data-dir',
        tempDir(),
        '--log',
        'json',
      ]);
      expect(failed.code).toBe(1);
      expect(parsed(failed.stderr)).toEqual([
        expect.objectContaining({
          level: 'error',
          code: 'port_in_use',
          message: expect.stringContaining('already in use'),
          hint: expect.any(String),
        }),
      ]);
    } finally {
      blocker.close();
    }

    const off = await serve(['--port', '0', '--data-dir', tempDir(), '--log', 'off']);
    await fetch(`${off.url}/healthz`);
    expect((await off.stop()).code).toBe(0);
    expect(off.stderr()).not.toContain('/healthz');
  });

  it('with --log json anywhere on the command line, a start that fails before serve has read its flags is JSON too', async () => {
    const file = join(tempDir(), 'file');
    writeFileSync(file, '');
    const cases: [string[], number, RegExp][] = [
      [['serve', '--bogus', '--log', 'json'], 2, /^unknown option '--bogus'/],
      [['serve', '--log=json', '--max-archive'], 2, /^option '--max-archive <size>' argument missing/],
      [['serve', '--port', '--log', 'json'], 2, /^too many arguments for 'serve'/],
      [['--log', 'json', 'serve', '--port', '0'], 2, /^unknown option '--log'/],
      [['serve', '--port', 'x', '--log', 'json'], 2, /^--port must be a port number/],
      [
        ['serve', '--database', 'postgres://u:secret@[bad/db', '--log', 'json'],
        2,
        /^--database: .* is not a PostgreSQL URL/,
      ],
      [
        ['serve', '--port', '0', '--data-dir', join(file, 'dir'), '--log', 'json'],
        1,
        /^cannot open the data dir .*not a directory/,
      ],
    ];
    const results = await Promise.all(cases.map(([args]) => runInProcess(args)));
    results.forEach((result, i) => {
      const [args, code, message] = cases[i];
      expect(result.code, args.join(' ')).toBe(code);
      expect(result.stdout).toBe('');
      const lines = result.stderr
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines[0], args.join(' ')).toEqual(
        expect.objectContaining({ time: expect.any(String), level: 'error', message: expect.stringMatching(message) }),
      );
    });
  });

  it('with --json and --log json, an error is reported once, as a log line on stderr; --json alone keeps the document on stdout', async () => {
    for (const args of [
      ['--json', 'serve', '--log', 'json', '--bogus'],
      ['--json', 'serve', '--port', 'x', '--log', 'json'],
    ]) {
      const result = await runInProcess(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout, args.join(' ')).toBe('');
      const lines = result.stderr
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(
        lines.filter((line) => line.level === 'error'),
        args.join(' '),
      ).toHaveLength(1);
    }
    const alone = await runInProcess(['--json', 'serve', '--bogus']);
    expect(alone.code).toBe(2);
    expect(JSON.parse(alone.stdout)).toEqual({ error: { code: 'invalid_input', message: "unknown option '--bogus'" } });
  });

  it.each([
    [['--max-archive', '12zz'], '--max-archive'],
    [['--max-unpacked', 'lots'], '--max-unpacked'],
    [['--port', '70000'], '--port'],
    [['--rate-limit', '5/hour'], '--rate-limit'],
    [['--pg-pool', '0'], '--pg-pool must be a number of connections from 1 to 1000 (got "0")'],
    [['--pg-pool', 'ten'], '--pg-pool must be a number of connections from 1 to 1000 (got "ten")'],
    [['--caps', 'nodes=0'], '--caps takes WORD=N pairs'],
    [['--trust-proxy', '10.0.0.0/33'], '--trust-proxy: "10.0.0.0/33" is neither'],
    [['--caps', 'publishers=3,stars=2'], '(got "stars=2")'],
    [['--public-url', 'ftp://x'], '--public-url'],
    [['--public-url', 'https://u:hunter2@registry.example.com'], '--public-url must not hold a user name or password'],
    [['--review', 'sometimes'], '--review'],
    [['--log', 'xml'], '--log'],
  ])('refuses %j before starting: exit 2 naming the flag', async (args, flag) => {
    const dataDir = join(tempDir(), 'data');
    const result = await runInProcess(['serve', '--port', '0', '--data-dir', dataDir, ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(flag);
    expect(result.stderr).not.toContain('hunter2');
    expect(result.stdout).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('names a database it cannot open without any of its password, also one holding an @ (the URL ends at the last)', async () => {
    const result = await runInProcess([
      'serve',
      '--port',
      '0',
      '--data-dir',
      join(tempDir(), 'data'),
      '--database',
      'postgres://nodereg:pa@ss-word@127.0.0.1:1/db',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot open --database postgres://***@127.0.0.1:1/db');
    expect(result.stderr).not.toContain('ss-word');
  });

  it('exits 1 naming the data dir when it is a file, without a stack trace', async () => {
    const file = join(tempDir(), 'not-a-dir');
    writeFileSync(file, 'x');
    const result = await runInProcess(['serve', '--port', '0', '--data-dir', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error: cannot open the data dir ${file}: it is a file, not a directory`);
    expect(result.stderr).not.toMatch(/ENOTDIR|\n\s+at /);
    expect(result.stdout).toBe('');
  });

  it('refuses a data dir whose database a newer nodereg wrote (exit 1, naming it), and leaves it as it was', async () => {
    const dataDir = tempDir();
    const file = join(dataDir, 'registry.db');
    const db = openDatabase(file);
    db.pragma(`user_version = ${migrations.length + 1}`);
    db.close();
    writeFileSync(join(dataDir, 'secret'), randomBytes(32).toString('hex'), { mode: 0o600 });
    const before = sha256(readFileSync(file));
    for (const args of [
      ['--data-dir', dataDir],
      ['--database', file, '--migrate-only'],
    ]) {
      const result = await runInProcess(['serve', '--port', '0', ...args]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `${file} was written by a newer nodereg (schema ${migrations.length + 1}, this one knows ${migrations.length})`,
      );
      expect(result.stdout).toBe('');
    }
    expect(sha256(readFileSync(file))).toBe(before);
  });

  it('exits 1 naming the port when it is in use', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const result = await runInProcess(['serve', '--port', String(port), '--data-dir', tempDir()]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`port ${port}`);
      expect(result.stderr).toContain('already in use');
      expect(result.stdout).toBe('');
    } finally {
      blocker.close();
    }
  });

  it('a first start that fails after generating the admin token (port in use): the next start says where it is', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const dataDir = tempDir();
    try {
      const failed = await runInProcess([
        'serve',
        '--port',
        String((blocker.address() as { port: number }).port),
        '--data-dir',
        dataDir,
      ]);
      expect(failed.code).toBe(1);
    } finally {
      blocker.close();
    }
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const next = await serve(['--port', '0', '--data-dir', dataDir]);
    expect(next.stderr()).toContain(`admin token: in ${join(dataDir, 'admin-token')} (printed only when generated)`);
    expect(next.stderr()).not.toContain(token);
    expect((await next.stop()).code).toBe(0);
  });
});

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

function readConfig(home: string): { mode: number; profiles: Record<string, { registry?: string; token?: string }> } {
  const path = join(home, '.config', 'nodereg', 'config.json');
  return { mode: statSync(path).mode & 0o777, profiles: JSON.parse(readFileSync(path, 'utf8')).profiles };
}

async function me(url: string, token: string): Promise<{ status: number; body: { user?: { admin?: boolean } } }> {
  const response = await fetch(`${url}/users/me`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as { user?: { admin?: boolean } } };
}

describe('nodereg serve: the admin token', () => {
  const tokenLine = /admin token \(shown once; also in (\S+)\): (nrg_u_\S+)/;

  it('on the default data dir: printed once, saved to the profile for that URL (0600), and it works', async () => {
    const home = tempDir('nodereg-home-');
    const port = await freePort();
    // a profile already points at this URL, without a token
    expect((await runInProcess(['config', 'set', 'registry', `http://127.0.0.1:${port}`], { home })).code).toBe(0);

    const first = await serve(['--port', String(port)], { home });
    const match = tokenLine.exec(first.stderr());
    expect(match, first.stderr()).not.toBeNull();
    const [, file, token] = match!;
    expect(file).toBe(join(home, '.local/share/nodereg/admin-token'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.stdout()).not.toContain(token);
    const config = readConfig(home);
    expect(config.mode).toBe(0o600);
    expect(config.profiles.default).toEqual({ registry: `http://127.0.0.1:${port}`, token });
    expect(await me(first.url, token)).toMatchObject({ status: 200, body: { user: { admin: true } } });
    // the CLI uses it with no token setup
    const whoami = await runInProcess(['config', 'get', 'token'], { home });
    expect(whoami.stdout).toMatch(/^nrg_u_…\(redacted\)/);
    expect((await first.stop()).code).toBe(0);

    const second = await serve(['--port', String(port)], { home });
    expect(second.stderr()).not.toContain(token);
    expect(tokenLine.test(second.stderr())).toBe(false);
    expect(await me(second.url, token)).toMatchObject({ status: 200 });
    expect((await second.stop()).code).toBe(0);
  });

  it('on the default data dir with no profile yet: the default profile gets this registry and its token', async () => {
    const home = tempDir('nodereg-home-');
    const served = await serve(['--port', String(await freePort())], { home });
    const token = tokenLine.exec(served.stderr())![2];
    expect((await served.stop()).code).toBe(0);
    expect(readConfig(home).profiles).toEqual({ default: { registry: served.url, token } });
    expect(served.stderr()).not.toContain('--profile');
  });

  it('a profile token that serve saved and a new data dir killed: a refusal says so, and which command saves a live one', async () => {
    const home = tempDir('nodereg-home-');
    const port = await freePort();
    const first = await serve(['--port', String(port)], { home });
    const dead = tokenLine.exec(first.stderr())![2];
    expect((await first.stop()).code).toBe(0);
    rmSync(join(home, '.local/share/nodereg'), { recursive: true });
    const second = await serve(['--port', String(port)], { home });
    expect(readConfig(home).profiles.default.token).toBe(dead); // the profile keeps what it holds
    const refused = await runInProcess(['whoami'], { home });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(
      `hint: profile "default" holds this token and http://127.0.0.1:${port} refuses it: it is stale`,
    );
    expect(refused.stderr).toContain('save a live one with `nodereg login`');
    // a token from the environment is not the profile's
    const given = await runInProcess(['whoami'], { home, env: { NODEREG_TOKEN: dead } });
    expect(given.code).toBe(4);
    expect(given.stderr).not.toContain('profile "default"');
    // the command the hint names saves the live one
    const live = readFileSync(join(home, '.local/share/nodereg/admin-token'), 'utf8').trim();
    expect((await runInProcess(['login', '--no-input'], { home, input: `${live}\n` })).code).toBe(0);
    expect((await runInProcess(['whoami'], { home })).code).toBe(0);
    expect((await second.stop()).code).toBe(0);
  });

  it('on the default data dir while the default profile points elsewhere: saved to a new "local" profile', async () => {
    const home = tempDir('nodereg-home-');
    expect((await runInProcess(['config', 'set', 'registry', 'http://127.0.0.1:9'], { home })).code).toBe(0);
    const served = await serve(['--port', String(await freePort())], { home });
    const token = tokenLine.exec(served.stderr())![2];
    expect((await served.stop()).code).toBe(0);
    expect(readConfig(home).profiles).toEqual({
      default: { registry: 'http://127.0.0.1:9' },
      local: { registry: served.url, token },
    });
    expect(served.stderr()).toContain('--profile local');
  });

  it('--port 0 on the default data dir saves no profile (the port is gone after a restart) and says how to reach this run', async () => {
    const home = tempDir('nodereg-home-');
    const file = join(home, '.local/share/nodereg/admin-token');
    for (let run = 0; run < 2; run++) {
      const served = await serve(['--port', '0'], { home });
      expect(served.stderr()).toContain(
        `admin token not saved to a profile: --port 0 picked port ${new URL(served.url).port} for this run only; point commands at it with NODEREG_REGISTRY=${served.url} NODEREG_TOKEN=$(cat ${file}), or serve on a fixed --port to have it saved`,
      );
      const whoami = await runInProcess(['whoami'], {
        home,
        env: { NODEREG_REGISTRY: served.url, NODEREG_TOKEN: readFileSync(file, 'utf8').trim() },
      });
      expect(whoami.code, whoami.stderr).toBe(0);
      expect((await served.stop()).code).toBe(0);
      expect(existsSync(join(home, '.config', 'nodereg', 'config.json'))).toBe(false);
    }
    // behind a --public-url the URL does not change with the port: saved as before
    const proxied = await serve(['--port', '0', '--public-url', 'http://127.0.0.1:4999'], { home });
    expect((await proxied.stop()).code).toBe(0);
    expect(readConfig(home).profiles.default).toEqual({
      registry: 'http://127.0.0.1:4999',
      token: readFileSync(file, 'utf8').trim(),
    });
  });

  it("a profile's registry where nothing listens (a stopped serve, a --port 0 an older build saved): the hint names the profile and how to fix it", async () => {
    const home = tempDir('nodereg-home-');
    const gone = `http://127.0.0.1:${await freePort()}`;
    expect((await runInProcess(['config', 'set', 'registry', gone], { home })).code).toBe(0);
    const refused = await runInProcess(['node', 'show', 'some-node'], { home });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `hint: nothing listens at ${gone}, the registry of profile "default" (a \`nodereg serve\` that stopped, or serves on another port now): start it there, pass --registry with the URL it serves on now, or save that URL in the profile (nodereg config set registry, then the URL)`,
    );
    // a URL given by flag or variable is not the profile's (no retry window: the retries were run above)
    for (const given of [['--registry', gone], []]) {
      const result = await runInProcess(['node', 'show', 'some-node', ...given], {
        home,
        env: { NODEREG_RETRY_WINDOW: '0', ...(given.length ? {} : { NODEREG_REGISTRY: gone }) },
      });
      expect(result.code).toBe(1);
      expect(result.stderr).not.toContain('the registry of profile');
    }
  });

  it('is neither saved for another data dir nor printed when NODEREG_ADMIN_TOKEN is set', async () => {
    const home = tempDir('nodereg-home-');
    const other = await serve(['--port', '0', '--data-dir', tempDir()], { home });
    expect(tokenLine.test(other.stderr())).toBe(true);
    expect((await other.stop()).code).toBe(0);
    expect(existsSync(join(home, '.config', 'nodereg', 'config.json'))).toBe(false);

    const given = 'nrg_u_given-admin-token-0123456789abcdefghijklmnop';
    const env = await serve(['--port', '0'], { home, env: { NODEREG_ADMIN_TOKEN: given } });
    expect(env.stderr()).not.toContain(given);
    expect(tokenLine.test(env.stderr())).toBe(false);
    expect(await me(env.url, given)).toMatchObject({ status: 200, body: { user: { admin: true } } });
    expect((await env.stop()).code).toBe(0);
    expect(existsSync(join(home, '.config', 'nodereg', 'config.json'))).toBe(false);
  });
});

const ADMIN = 'nrg_u_e2e-admin-token-abcdefghijklmnopqrstuvwxyz012345';

async function api(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(url + path, {
    method,
    headers: {
      authorization: `Bearer ${ADMIN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

describe('nodereg serve --seed', () => {
  it('fills an empty data dir through the API, once; the data survives a restart and goes into a backup', async () => {
    const dataDir = join(tempDir(), 'data');
    const first = await serve(['--port', '0', '--data-dir', dataDir, '--seed']);
    // The hints come in writes after the "seeded" line: wait for the last of them (or a failure).
    await vi.waitFor(() => expect(first.stderr()).toMatch(/Browse: |seeding failed|not seeding/), {
      timeout: 20_000,
      interval: 50,
    });
    expect(first.stderr()).not.toMatch(/seeding failed|not seeding/);
    expect(first.stderr()).toMatch(/seeded publisher "example"/);
    expect(first.stderr()).toContain('nodereg publisher create');
    expect(first.stderr()).toContain('nodereg publish');
    expect(first.stdout()).toBe(`nodereg registry listening on ${first.url}\n`);

    const install = await fetch(`${first.url}/nodes/example-node/install`);
    expect(install.status).toBe(200);
    const version = (await install.json()) as { version: string; downloadUrl: string };
    expect(version.version).toBe('1.0.0');
    const archive = Buffer.from(await (await fetch(version.downloadUrl)).arrayBuffer());
    expect(archive.subarray(0, 2).toString()).toBe('PK');
    expect((await first.stop()).code).toBe(0);

    // not empty any more: a second --seed start seeds nothing, and the data is still there
    const second = await serve(['--port', '0', '--data-dir', dataDir, '--seed']);
    const node = await fetch(`${second.url}/nodes/example-node`);
    expect(node.status).toBe(200);
    expect(((await node.json()) as { latest_version?: { version?: string } }).latest_version?.version).toBe('1.0.0');
    const publisher = await fetch(`${second.url}/publishers/example`);
    expect(publisher.status).toBe(200);

    const out = join(tempDir(), 'backup');
    const backup = await runInProcess(['--json', 'backup', '--data-dir', dataDir, out]);
    expect(backup.code).toBe(0);
    expect(JSON.parse(backup.stdout).archives.files).toBe(1);
    expect(readFileSync(join(out, 'archives/example/example-node/1.0.0/node.zip')).equals(archive)).toBe(true);
    expect((await second.stop()).code).toBe(0);
    expect(second.stderr()).not.toContain('seeded publisher');
    expect(integrity(join(out, 'registry.db'))).toBe('ok');
  });
});

describe('nodereg serve: graceful close', () => {
  it('lets an upload in flight finish when SIGTERM arrives, then exits 0', async () => {
    const dataDir = tempDir();
    const served = await serve(['--port', '0', '--data-dir', dataDir], { env: { NODEREG_ADMIN_TOKEN: ADMIN } });
    expect((await api(served.url, 'POST', '/publishers', { id: 'grace', name: 'Grace' })).status).toBe(201);
    const published = await api(served.url, 'POST', '/publishers/grace/nodes/slow-node/versions', {
      node: { id: 'slow-node', description: 'uploaded slowly' },
      node_version: { version: '1.0.0' },
    });
    expect(published.status).toBe(201);
    const zip = await exampleZip();
    const half = Math.floor(zip.length / 2);

    const { request } = await import('node:http');
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      // Expect: 100-continue: the server answers once it has the request, so it is in flight for sure
      const req = request(published.json.signedUrl, {
        method: 'PUT',
        headers: {
          'content-type': 'application/zip',
          'content-length': zip.length,
          'x-content-sha256': sha256(zip),
          expect: '100-continue',
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.on('continue', () => {
        req.write(zip.subarray(0, half), () => {
          // half the body is sent: ask the server to stop, and send the rest once it is closing
          served.child.kill('SIGTERM');
          vi.waitFor(() => expect(served.stderr()).toContain('SIGTERM: closing'), {
            timeout: 20_000,
            interval: 20,
          }).then(() => req.end(zip.subarray(half)), reject);
        });
      });
    });
    const { status, body } = await answer;
    expect(status, body).toBe(200);
    expect(JSON.parse(body).status).toBe('NodeVersionStatusActive');
    expect(await served.exited).toEqual({ code: 0, signal: null });
    expect(readFileSync(join(dataDir, 'archives/grace/slow-node/1.0.0/node.zip')).equals(zip)).toBe(true);
    expect(integrity(join(dataDir, 'registry.db'))).toBe('ok');
  });
});

describe('nodereg backup', () => {
  it('takes a consistent snapshot while the server runs', async () => {
    const dataDir = tempDir();
    const served = await serve(['--port', '0', '--data-dir', dataDir]);
    const out = join(tempDir(), 'backup');
    const result = await runInProcess(['backup', '--data-dir', dataDir, out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('registry.db');
    expect(integrity(join(out, 'registry.db'))).toBe('ok');
    expect(readFileSync(join(out, 'secret'), 'utf8')).toBe(readFileSync(join(dataDir, 'secret'), 'utf8'));
    expect(statSync(join(out, 'secret')).mode & 0o777).toBe(0o600);
    // private as the data dir is: the database holds token hashes and e-mails
    expect(statSync(out).mode & 0o777).toBe(0o700);
    expect(statSync(join(out, 'registry.db')).mode & 0o777).toBe(0o600);
    // the server keeps serving
    expect((await fetch(`${served.url}/healthz`)).status).toBe(200);
    expect((await served.stop()).code).toBe(0);

    // the backup is a data dir a server starts on
    const restored = await serve(['--port', '0', '--data-dir', out]);
    expect((await fetch(`${restored.url}/healthz`)).status).toBe(200);
    expect((await restored.stop()).code).toBe(0);
  });

  it('refuses an OUT that is not empty, and a dir without a registry', async () => {
    const registry = await startServer(); // a data dir a registry made, the registry stopped
    await registry.close();
    const dataDir = registry.dataDir;
    const taken = tempDir();
    const kept = join(taken, 'keep.txt');
    await import('node:fs').then((fs) => fs.writeFileSync(kept, 'mine'));
    const refused = await runInProcess(['backup', '--data-dir', dataDir, taken]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('not an empty dir');
    expect(readdirSync(taken)).toEqual(['keep.txt']);

    const empty = tempDir();
    const noRegistry = await runInProcess(['backup', '--data-dir', empty, join(tempDir(), 'out')]);
    expect(noRegistry.code).toBe(2);
    expect(noRegistry.stderr).toContain('no registry database');

    // an existing empty dir is fine
    const emptyOut = tempDir();
    expect((await runInProcess(['--json', 'backup', '--data-dir', dataDir, emptyOut])).code).toBe(0);
    expect(integrity(join(emptyOut, 'registry.db'))).toBe('ok');
  });
});
