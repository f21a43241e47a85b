// Secrets: tokens are kept only as hashes; they never show in the access log (in process and in
// `nodereg serve`'s stderr), in error answers, or in any file of the data dir; secret files are 0600;
// a PAT of one publisher is useless on another. And `serve --rate-limit`, end to end.
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { runCli, startServer, tempDir, type TestServer } from '../helpers.js';
import { useServe } from '../server/serve-helper.js';
import {
  call,
  createPat,
  createPublisher,
  createUser,
  expectError,
  makeZip,
  publish,
  uploadTo,
  type Reply,
  type TestUser,
} from '../server/fixtures.js';
import { figure } from '../figures.js';

const serve = useServe();

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const bogus = () => `nrg_u_${randomBytes(24).toString('base64url')}`;

/** Every file under a dir, recursively. */
const filesUnder = (dir: string) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));

describe('tokens at rest, in logs and in answers', () => {
  let server: TestServer;
  const logs: string[] = [];
  const secrets: string[] = [];
  /** Answers that are not the one-time display of a token just created. */
  const answers: Reply[] = [];
  let alice: TestUser;
  let bob: TestUser;
  let patA = '';
  let patB = '';

  beforeAll(async () => {
    server = await startServer({ log: (line) => logs.push(line) });
    alice = await createUser(server, 'alice-secret');
    bob = await createUser(server, 'bob-secret');
    await createPublisher(server, alice, 'alice-co');
    await createPublisher(server, bob, 'bob-co');
    patA = await createPat(server, alice, 'alice-co');
    patB = await createPat(server, bob, 'bob-co');
    const second = await call(server.url, 'POST', '/users/me/tokens', { token: alice.token, body: { name: 'laptop' } });
    secrets.push(server.adminToken, alice.token, bob.token, patA, patB, second.body.token);

    // Requests that carry tokens every way there is, good and bad.
    const wrong = bogus();
    const wrongPat = `nrg_pat_${randomBytes(24).toString('base64url')}`;
    secrets.push(wrong, wrongPat);
    const published = await publish(server, patA, 'alice-co', 'secret-node', '1.0.0');
    answers.push(
      published,
      await uploadTo(published.body.signedUrl, await makeZip()),
      await call(server.url, 'POST', '/publishers/alice-co/nodes/secret-node/versions', {
        body: { personal_access_token: patA, node: { id: 'secret-node' }, node_version: { version: '1.1.0' } },
      }),
      await call(server.url, 'POST', '/publishers/alice-co/nodes/secret-node/versions', {
        token: patA,
        body: { personal_access_token: wrongPat, node: { id: 'secret-node' }, node_version: { version: '1.2.0' } },
      }),
      await call(server.url, 'GET', '/users/me', { token: wrong }),
      await call(server.url, 'GET', '/users/me', { token: patA }),
      await call(server.url, 'GET', '/users/me/tokens', { token: alice.token }),
      await call(server.url, 'GET', '/publishers/alice-co/tokens', { token: alice.token }),
      await call(server.url, 'PUT', '/publishers/bob-co', { token: patA, body: { name: 'mine now' } }),
      await call(server.url, 'POST', `/nodes/secret-node/reviews?star=9`, { token: alice.token }),
      await call(server.url, 'POST', `/nodes/secret-node/reviews?star=4&token=${alice.token}`, { token: alice.token }),
      await call(server.url, 'GET', `/nodes/search?q=${encodeURIComponent(patB)}`),
      await call(server.url, 'POST', '/users', { token: server.adminToken, body: { name: { token: alice.token } } }),
      await call(server.url, 'GET', '/users/me', {
        headers: { authorization: `Basic ${Buffer.from(`x:${bob.token}`).toString('base64')}` },
      }),
    );
  });
  afterAll(() => server.close());

  it('lists tokens by their 12-character prefix only', async () => {
    const pats = await call(server.url, 'GET', '/publishers/alice-co/tokens', { token: alice.token });
    expect(pats.body.map((t: { prefix: string }) => t.prefix)).toContain(patA.slice(0, 12));
    expect(pats.text).not.toContain(patA);
  });

  it('never shows a token in an answer (other than the one-time display of a new token) or in the access log', () => {
    expect(answers.length).toBeGreaterThan(10);
    for (const reply of answers) for (const secret of secrets) expect(reply.text).not.toContain(secret);
    expect(logs.length).toBeGreaterThan(10);
    for (const line of logs) for (const secret of secrets) expect(line).not.toContain(secret);
  });

  it('stores tokens as SHA-256 only: no file of the data dir holds one', async () => {
    await server.close();
    const files = filesUnder(server.dataDir);
    expect(files.some((file) => file.endsWith('registry.db'))).toBe(true);
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const secret of secrets) expect(bytes.includes(secret), `${secret.slice(0, 12)}… in ${file}`).toBe(false);
    }
    const db = new Database(join(server.dataDir, 'registry.db'), { readonly: true });
    const hashes = new Set((db.prepare('SELECT hash FROM tokens').all() as { hash: string }[]).map((row) => row.hash));
    db.close();
    for (const secret of [server.adminToken, alice.token, bob.token, patA, patB])
      expect(hashes.has(sha256(secret))).toBe(true);
    figure(
      'secrets.tokens_checked',
      secrets.length,
      `${answers.length} answers, ${logs.length} log lines and ${files.length} data files searched`,
    );
  });
});

describe('secret files', () => {
  it('writes DIR/secret, DIR/callback-key and a generated DIR/admin-token with mode 0600', async () => {
    const dataDir = tempDir('nodereg-data-');
    const { createRegistryServer } = await import('../../src/server/index.js');
    const fresh = createRegistryServer({ dataDir, port: 0 });
    await fresh.listen();
    await fresh.close();
    for (const name of ['secret', 'callback-key', 'admin-token'])
      expect((statSync(join(dataDir, name)).mode & 0o777).toString(8), name).toBe('600');
  });

  it('keeps the CLI config file at 0600, and config get shows a token redacted', async () => {
    const home = tempDir('nodereg-home-');
    const token = bogus();
    const set = await runInProcess(['config', 'set', 'token', token], { home });
    expect(set.code, set.stderr).toBe(0);
    const configDir = join(home, '.config');
    const files = filesUnder(configDir).filter((file) => file.endsWith('.json'));
    expect(files).toHaveLength(1);
    expect((statSync(files[0]).mode & 0o777).toString(8)).toBe('600');
    expect(set.stdout + set.stderr).not.toContain(token);
    const got = await runInProcess(['config', 'get', 'token', '--verbose'], { home });
    expect(got.stdout + got.stderr).not.toContain(token);
    expect(got.stdout).toContain('nrg_u_…(redacted)');
  });
});

describe('the CLI with --verbose', () => {
  it('never prints a token: not in request logs, errors, a dry run or a publish (a new token is shown once, on stdout)', {
    timeout: 90_000,
  }, async () => {
    const server = await startServer();
    try {
      const owner = await createUser(server, 'cli-owner');
      await createPublisher(server, owner, 'cli-co');
      const pat = await createPat(server, owner, 'cli-co');
      const wrong = bogus();
      const secrets = [server.adminToken, owner.token, pat, wrong];
      const dir = tempDir('nodereg-node-');
      const home = tempDir('nodereg-home-');
      const env = { NODEREG_REGISTRY: server.url };
      const cli = (args: string[], token: string) =>
        runInProcess(['--verbose', ...args], { cwd: dir, home, env: { ...env, NODEREG_TOKEN: token } });
      const init = await runInProcess(
        ['init', '--publisher', 'cli-co', '--name', 'cli-node', '--version', '1.0.0', '--no-input'],
        { cwd: dir, home },
      );
      expect(init.code, init.stderr).toBe(0);
      const runs = [
        await cli(['whoami'], owner.token),
        await cli(['whoami'], pat),
        await cli(['publish', '--dry-run'], pat),
        await cli(['publish'], pat),
        await cli(['publish', '--skip-existing'], pat),
        await cli(['token', 'list', '--publisher', 'cli-co'], owner.token),
        await cli(['review', 'cli-node', '--star', '5'], owner.token),
        await cli(['review', 'cli-node', '--star', '9'], owner.token),
        await cli(['whoami'], wrong),
        await cli(['node', 'update', 'cli-node', '--description', 'x'], wrong),
        await runInProcess(['--verbose', '--token', wrong, 'whoami'], { cwd: dir, home, env }),
      ];
      expect(runs[3].code, runs[3].stderr).toBe(0);
      expect(runs[8].code, 'an unknown token is an auth failure').toBe(4);
      expect(runs.map((run) => run.stderr).join('\n')).toMatch(/→ GET/);
      for (const run of runs)
        for (const secret of secrets)
          expect(run.stdout + run.stderr, `${secret.slice(0, 10)}… printed`).not.toContain(secret);
      // creating a token prints it once, on stdout, and nothing else secret anywhere
      const created = await cli(['token', 'create', '--publisher', 'cli-co', '--name', 'printed-once'], owner.token);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toMatch(/nrg_pat_/);
      for (const secret of secrets) expect(created.stdout + created.stderr).not.toContain(secret);
      figure('secrets.cli_verbose_runs', runs.length + 1, 'nodereg … --verbose runs with no token in their output');
    } finally {
      await server.close();
    }
  });
});

describe('a PAT of one publisher on another publisher', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let patA = '';
  let patB = '';

  beforeAll(async () => {
    server = await startServer();
    alice = await createUser(server, 'alice-pat');
    bob = await createUser(server, 'bob-pat');
    await createPublisher(server, alice, 'alice-pub');
    await createPublisher(server, bob, 'bob-pub');
    patA = await createPat(server, alice, 'alice-pub');
    patB = await createPat(server, bob, 'bob-pub');
    expect((await publish(server, bob.token, 'bob-pub', 'bob-node', '1.0.0')).status).toBe(201);
  });
  afterAll(() => server.close());

  it("is useless: every write to the other publisher's resources is 403, and nothing changes", async () => {
    const patBId = (await call(server.url, 'GET', '/publishers/bob-pub/tokens', { token: bob.token })).body[0].id;
    const before = {
      publisher: (await call(server.url, 'GET', '/publishers/bob-pub')).text,
      node: (await call(server.url, 'GET', '/nodes/bob-node')).text,
      versions: (await call(server.url, 'GET', '/nodes/bob-node/versions')).text,
    };
    const attempts: [string, string, Record<string, unknown> | undefined][] = [
      [
        'POST',
        '/publishers/bob-pub/nodes/bob-node/versions',
        { node: { id: 'bob-node' }, node_version: { version: '2.0.0' } },
      ],
      [
        'POST',
        '/publishers/bob-pub/nodes/new-node/versions',
        { node: { id: 'new-node' }, node_version: { version: '1.0.0' } },
      ],
      ['PUT', '/publishers/bob-pub/nodes/bob-node', { description: 'taken over' }],
      ['PUT', '/publishers/bob-pub', { name: 'taken over' }],
      ['PUT', '/publishers/bob-pub/nodes/bob-node/versions/1.0.0', { changelog: 'taken over' }],
      ['GET', '/publishers/bob-pub/tokens', undefined],
      ['POST', '/publishers/bob-pub/tokens', { name: 'backdoor' }],
      ['DELETE', `/publishers/bob-pub/tokens/${patBId}`, undefined],
      ['POST', '/publishers/bob-pub/members', { user_id: alice.id, role: 'owner' }],
      ['DELETE', `/publishers/bob-pub/members/${bob.id}`, undefined],
      // and nothing beyond its own publisher: no new publisher, no user tokens
      ['POST', '/publishers', { id: 'pat-made', name: 'x' }],
      ['POST', '/users/me/tokens', { name: 'escalate' }],
    ];
    for (const [method, path, body] of attempts) {
      const reply = await call(server.url, method, path, { token: patA, body });
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(403);
      expectError(reply, 403, 'forbidden');
    }
    expect((await call(server.url, 'GET', '/publishers/bob-pub')).text).toBe(before.publisher);
    expect((await call(server.url, 'GET', '/nodes/bob-node')).text).toBe(before.node);
    expect((await call(server.url, 'GET', '/nodes/bob-node/versions')).text).toBe(before.versions);
    expect((await call(server.url, 'GET', '/users/me', { token: patB })).status).toBe(200);
    expect((await call(server.url, 'GET', '/publishers/pat-made')).status).toBe(404);
    figure('secrets.cross_publisher_pat_refused', attempts.length, 'every write of a PAT to another publisher is 403');
  });
});

describe('nodereg serve: its access log, and --rate-limit', () => {
  it('logs no token on stderr (json and pretty), and answers 429 rate_limited with Retry-After past the limit', {
    timeout: 60_000,
  }, async () => {
    const adminToken = bogus();
    const seen: string[] = [adminToken];
    for (const log of ['json', 'pretty']) {
      const served = await serve(
        ['--port', '0', '--data-dir', join(tempDir(), 'data'), '--log', log, '--rate-limit', '3/min'],
        {
          env: { NODEREG_ADMIN_TOKEN: adminToken },
        },
      );
      try {
        const created = await call(served.url, 'POST', '/users', { token: adminToken, body: { name: `user-${log}` } });
        expect(created.status, created.text).toBe(201);
        const token = created.body.token as string;
        seen.push(token);
        const wrong = bogus();
        seen.push(wrong);
        await call(served.url, 'GET', '/users/me', { token: wrong });
        await call(served.url, 'GET', `/nodes/search?q=${token}`);
        await call(served.url, 'POST', `/nodes/x/reviews?star=3&token=${token}`, { token });
        // the user's budget is 3 changes a minute: the third above was one
        for (let i = 0; i < 2; i++) {
          const reply = await call(served.url, 'POST', '/users/me/tokens', { token, body: { name: `t${i}` } });
          expect(reply.status, reply.text).toBe(201);
          seen.push(reply.body.token);
        }
        const limited = await call(served.url, 'POST', '/users/me/tokens', { token, body: { name: 'one too many' } });
        expectError(limited, 429, 'rate_limited');
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        // reads are never limited
        expect((await call(served.url, 'GET', '/users/me', { token })).status).toBe(200);
      } finally {
        await served.stop();
      }
      const stderr = served.stderr();
      expect(stderr).toMatch(log === 'json' ? /"status":429/ : / 429 /);
      for (const secret of seen) expect(stderr).not.toContain(secret);
    }
  });
});
