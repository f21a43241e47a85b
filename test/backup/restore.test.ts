// `nodereg restore` as an operator runs it: a registry built through a spawned `nodereg serve` (SQLite,
// local archives), stopped and backed up, restored into PostgreSQL and S3 (s3rver) and into a new
// SQLite data dir; then each is served and answers every read as the original does, old tokens work,
// downloads have the same SHA-256, and every row of every table is the source's.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { postgresTables, restore, sqliteTables, SEEDED_TABLES, type Table } from '../../src/server/restore.js';
import { closedPort, runInProcess } from '../cli/in-process.js';
import { BIN, cliEnv, PNG, runCli, tempDir, type TestServer } from '../helpers.js';
import { checkHints } from '../cli/hint-check.js';
import { runHints } from '../cli/hints.js';
import { writeTree } from '../package/fixtures.js';
import { testPostgres } from '../postgres.js';
import { testS3 } from '../s3.js';
import {
  addMember,
  call,
  createPat,
  createPublisher,
  createUser,
  makeZip,
  publish,
  publishAndUpload,
  uploadTo,
  type TestUser,
} from '../server/fixtures.js';
import { useServe, type Served } from '../server/serve-helper.js';

const serve = useServe();

const postgresServer = testPostgres({ own: true }); // its own: a test freezes it
const s3Server = testS3();
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

interface Built {
  dataDir: string;
  backup: string;
  adminToken: string;
  alice: TestUser;
  bob: TestUser;
  pat: string;
  taskId: string;
  /** The upload URL the original signed for a version it registered without an archive. */
  signedUrl: string;
  originalUrl: string;
}

/** A registry with something in every table, built through the API of a spawned `nodereg serve`, then stopped and backed up. */
async function build(): Promise<Built> {
  const dataDir = tempDir('nodereg-source-');
  const served = await serve(['--port', '0', '--data-dir', dataDir]);
  const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const server = { url: served.url, adminToken } as TestServer;
  const alice = await createUser(server, 'alice');
  const bob = await createUser(server, 'bob');
  const carol = await createUser(server, 'carol');
  await createPublisher(server, alice, 'acme', { description: 'Acme nodes', website: 'https://acme.example' });
  await createPublisher(server, bob, 'shady');
  await addMember(server, alice, 'acme', bob);
  expect(
    (
      await call(server.url, 'POST', '/publishers/acme/members', {
        token: alice.token,
        body: { user: carol.id, role: 'owner' },
      })
    ).status,
  ).toBe(201); // pending
  const pat = await createPat(server, alice, 'acme');
  const revoked = await createPat(server, alice, 'acme', 'old');
  const tokens = await call(server.url, 'GET', '/publishers/acme/tokens', { token: alice.token });
  const old = tokens.body.find((t: { name: string }) => t.name === 'old');
  expect((await call(server.url, 'DELETE', `/publishers/acme/tokens/${old.id}`, { token: alice.token })).status).toBe(
    204,
  );
  expect(revoked).toMatch(/^nrg_pat_/);

  for (const version of ['1.0.0', '1.1.0', '2.0.0-beta.1', '2.0.0']) {
    await publishAndUpload(server, pat, 'acme', 'alpha-node', version, {
      node: { description: 'Relights portraits', tags: ['image', 'light'], license: 'MIT' },
      node_version: { dependencies: ['numpy>=1.26'], changelog: `v${version}` },
    });
  }
  await publishAndUpload(server, alice.token, 'acme', 'beta-node', '0.1.0', {
    node: { name: 'Beta Node', supported_os: ['linux'] },
  });
  await publishAndUpload(server, bob.token, 'shady', 'shady-node', '1.0.0');
  const pending = await publish(server, pat, 'acme', 'alpha-node', '3.0.0'); // registered, its archive never uploaded
  expect(pending.status).toBe(201);
  const put = (path: string, token: string, body: unknown) => call(server.url, 'PUT', path, { token, body });
  expect((await put('/publishers/acme/nodes/alpha-node/versions/1.0.0', pat, { deprecated: true })).status).toBe(200);
  expect(
    (await put('/publishers/acme/nodes/alpha-node/versions/1.1.0', alice.token, { status: 'NodeVersionStatusDeleted' }))
      .status,
  ).toBe(200);
  expect(
    (
      await put('/publishers/acme/nodes/beta-node/versions/0.1.0', adminToken, {
        status: 'NodeVersionStatusFlagged',
        status_reason: 'looks odd',
      })
    ).status,
  ).toBe(200);
  expect((await put('/publishers/shady', adminToken, { status: 'PublisherStatusBanned' })).status).toBe(200);
  const [dave, erin] = [await createUser(server, 'dave'), await createUser(server, 'erin')];
  for (const [user, star] of [
    [dave, 5],
    [erin, 4],
    [carol, 2],
  ] as const) {
    expect(
      (await call(server.url, 'POST', '/nodes/alpha-node/reviews?star=' + star, { token: user.token })).status,
    ).toBe(200);
  }
  expect((await call(server.url, 'POST', '/nodes/alpha-node/reviews?star=3', { token: carol.token })).status).toBe(200); // replaces the 2
  for (let i = 0; i < 3; i++) expect((await call(server.url, 'GET', '/nodes/alpha-node/install')).status).toBe(200);
  const task = await call(server.url, 'POST', '/proxy/img/v1/ai/skin-enhancer/flexible', {
    token: bob.token,
    body: { image: PNG.toString('base64') },
  });
  expect(task.status, task.text).toBe(200);
  await vi.waitFor(
    async () => {
      const status = await call(server.url, 'GET', `/proxy/img/v1/ai/skin-enhancer/${task.body.data.task_id}`, {
        token: bob.token,
      });
      expect(status.body.data.status).toBe('COMPLETED');
    },
    { timeout: 20_000, interval: 200 },
  );
  expect((await served.stop()).code).toBe(0);

  const backup = join(tempDir(), 'snapshot');
  const backedUp = await runInProcess(['backup', '--data-dir', dataDir, backup]);
  expect(backedUp.code, backedUp.stderr).toBe(0);
  return {
    dataDir,
    backup,
    adminToken,
    alice,
    bob,
    pat,
    taskId: task.body.data.task_id,
    signedUrl: pending.body.signedUrl,
    originalUrl: served.url,
  };
}

/** The reads compared, each with the token it is made with (none for the public ones). */
function reads(built: Built): [string, string | undefined][] {
  const { alice, adminToken } = built;
  const list: [string, string | undefined][] = [];
  for (const sort of ['created_at', 'downloads', 'rating', 'name', 'search_ranking'])
    list.push([`/nodes?sort=${sort}`, undefined]);
  list.push(['/nodes?limit=1&page=2', undefined]);
  for (const node of ['alpha-node', 'beta-node', 'shady-node']) {
    for (const path of [
      `/nodes/${node}`,
      `/nodes/${node}/versions`,
      `/nodes/${node}/versions?include_status_reason=true`,
    ]) {
      list.push([path, undefined], [path, adminToken]);
    }
  }
  list.push(['/nodes/search?q=relights', undefined], ['/nodes/search?q=shady', undefined]);
  list.push(
    ['/nodes/alpha-node/versions/1.0.0', undefined],
    ['/nodes/alpha-node/versions/1.1.0', alice.token],
    ['/nodes/alpha-node/versions/3.0.0', alice.token],
  );
  for (const publisher of ['acme', 'shady'])
    list.push(
      [`/publishers/${publisher}`, undefined],
      [`/publishers/${publisher}`, alice.token],
      [`/publishers/${publisher}/nodes`, undefined],
    );
  list.push(
    ['/publishers/acme/invitations', alice.token],
    ['/users/me', alice.token],
    ['/users/me/tokens', alice.token],
    ['/publishers/acme/tokens', alice.token],
  );
  list.push([`/proxy/img/v1/ai/skin-enhancer/${built.taskId}`, built.bob.token]);
  list.push(
    ['/nodes/alpha-node/install', undefined],
    ['/nodes/alpha-node/install?version=1.0.0', undefined],
    ['/nodes/beta-node/install', undefined],
  );
  return list;
}

/** Every answer, with the server's own URL as BASE and the minute a token was last used left out. */
async function answers(url: string, built: Built): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [path, token] of reads(built)) {
    const reply = await call(url, 'GET', path, { token });
    const text = reply.text.replaceAll(url, 'BASE').replace(/"last_used_at":"[^"]*"/g, '"last_used_at":"…"');
    out.push({ path, token: token?.slice(0, 8), status: reply.status, body: JSON.parse(text) });
  }
  return out;
}

/** A value as both stores hold it: JSON documents parsed, booleans and big integers as numbers. */
function canonical(value: unknown, type: string | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (type === 'jsonb') return JSON.stringify(sortKeys(typeof value === 'string' ? JSON.parse(value) : value));
  if (type === 'boolean' || type === 'bigint' || typeof value === 'bigint') return Number(value);
  return value;
}
const sortKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(sortKeys)
    : value && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([k, v]) => [k, sortKeys(v)]),
        )
      : value;
const rowsText = (rows: Record<string, unknown>[], table: Table, types: Map<string, string>) =>
  rows
    .map((row) => JSON.stringify(table.columns.map((c) => canonical(row[c], types.get(`${table.name}.${c}`)))))
    .sort();

/** The source's tables, whose columns both dumps list in the same order. */
let tables: Table[];

function sqliteDump(file: string, types = new Map<string, string>()): Record<string, string[]> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    tables ??= sqliteTables(db);
    return Object.fromEntries(
      tables.map((t) => [
        t.name,
        rowsText(db.prepare(`SELECT * FROM "${t.name}"`).all() as Record<string, unknown>[], t, types),
      ]),
    );
  } finally {
    db.close();
  }
}

async function postgresDump(url: string): Promise<{ dump: Record<string, string[]>; types: Map<string, string> }> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const { tables: own, types } = await postgresTables(sql);
    const dump: Record<string, string[]> = {};
    for (const table of own)
      dump[table.name] = rowsText(
        await sql`SELECT * FROM ${sql(table.name)}`,
        tables.find((t) => t.name === table.name) ?? table,
        types,
      );
    return { dump, types };
  } finally {
    await sql.end();
  }
}

/** Rows in the tables a restore fills (the seeded ones left out). */
async function postgresRows(url: string): Promise<number> {
  const { dump } = await postgresDump(url);
  return Object.entries(dump)
    .filter(([name]) => !SEEDED_TABLES.includes(name))
    .reduce((n, [, rows]) => n + rows.length, 0);
}

let built: Built;
let expected: unknown[];

beforeAll(async () => {
  built = await build();
  sqliteDump(join(built.backup, 'registry.db'));
  // The original, served again from its own data dir: the answers every restored copy must give.
  const original = await serve(['--port', '0', '--data-dir', built.dataDir]);
  expected = await answers(original.url, built);
  await original.stop();
}, 120_000);

async function checkServed(
  served: Served,
  built: Built,
  downloads: Record<string, string>,
  dataDir: string,
): Promise<void> {
  expect(await answers(served.url, built)).toEqual(expected);
  // The secret came along: an upload URL the original signed is good here, and the callback key is the same.
  const uploaded = await uploadTo(
    built.signedUrl.replace(built.originalUrl, served.url),
    await makeZip({ 'node.py': '# 3.0.0\n' }),
  );
  expect(uploaded.status, uploaded.text).toBe(200);
  expect(readFileSync(join(dataDir, 'callback-key'), 'utf8')).toBe(
    readFileSync(join(built.dataDir, 'callback-key'), 'utf8'),
  );
  // Downloads: the same bytes as the source's archive files.
  for (const [version, file] of Object.entries(downloads)) {
    const install = await call(served.url, 'GET', `/nodes/alpha-node/install?version=${version}`);
    const archive = Buffer.from(await (await fetch(install.body.downloadUrl)).arrayBuffer());
    expect(sha256(archive)).toBe(sha256(readFileSync(file)));
    expect(sha256(archive)).toBe(install.body.archive_sha256);
  }
  // The old user token and the publisher's token still work: a new version, published and uploaded with the CLI.
  const project = writeTree(tempDir(), {
    'pyproject.toml':
      '[project]\nname = "alpha-node"\nversion = "4.0.0"\ndescription = "Relights portraits"\n\n[tool.nodereg]\npublisher = "acme"\n',
    '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
  });
  const published = await runInProcess(['publish', project, '--json'], {
    env: { NODEREG_REGISTRY: served.url, NODEREG_TOKEN: built.pat },
  });
  expect(published.code, published.stderr).toBe(0);
  expect(JSON.parse(published.stdout)).toMatchObject({ version: '4.0.0', status: 'NodeVersionStatusActive' });
  const whoami = await runInProcess(['whoami', '--json'], {
    env: { NODEREG_REGISTRY: served.url, NODEREG_TOKEN: built.alice.token },
  });
  expect(whoami.code, whoami.stderr).toBe(0);
  expect(whoami.stdout).toContain('alice');
  // The admin token as well.
  expect((await call(served.url, 'GET', '/users/me', { token: built.adminToken })).body).toMatchObject({
    user: { admin: true },
  });
}

const archiveFile = (root: string, version: string) =>
  join(root, 'archives', 'acme', 'alpha-node', version, 'node.zip');

describe.skipIf(!postgresServer)('restore into PostgreSQL and S3', () => {
  it('carries every row, the archives and the secret; served, it answers as the original did; a second run is refused', async () => {
    const databaseUrl = await (await postgresServer!).database();
    const s3 = await s3Server;
    const storage = s3
      ? { env: s3.env, url: `s3://${await s3.bucket()}/archives` }
      : { env: {}, url: join(tempDir(), 'archives') };
    const env = { ...storage.env, NODEREG_DATABASE_URL: databaseUrl, NODEREG_STORAGE_URL: storage.url };

    // With a password in the URL (the test server trusts its users, so any password connects): never printed.
    const withPassword = databaseUrl.replace('://nodereg@', '://nodereg:hunter2@');
    expect(withPassword).not.toBe(databaseUrl);
    const restored = await runInProcess(['restore', built.backup], {
      env: { ...env, NODEREG_DATABASE_URL: withPassword },
    });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout + restored.stderr).not.toContain('hunter2');
    // The serve line reads the URL from the variable, so it can be pasted as it is (here with --migrate-only, to run it quickly).
    const serveLine = /^serve it: (.*)$/m.exec(restored.stdout)![1];
    expect(serveLine).toBe(
      `NODEREG_ADMIN_TOKEN="$(cat ${join(built.backup, 'admin-token')})" nodereg serve --database "$NODEREG_DATABASE_URL" --storage ${storage.url}`,
    );
    const pasted = spawnSync('sh', ['-c', `${serveLine} --migrate-only`], {
      env: cliEnv(tempDir(), { ...env, NODEREG_DATABASE_URL: withPassword }),
      encoding: 'utf8',
    });
    expect(pasted.status, pasted.stderr).toBe(0);
    expect(pasted.stderr).toMatch(/migrations applied to postgres:\/\/\*\*\*@\S+ \(--database\)/);
    expect(pasted.stderr).not.toContain('hunter2');
    expect(restored.stderr).toContain('copying 6 archives');
    expect(restored.stdout).toMatch(/archives {4}6 files, .*, each SHA-256 checked/);
    expect(restored.stdout).toContain('AI results  1 file');
    expect(restored.stdout).toContain(`NODEREG_ADMIN_TOKEN="$(cat ${join(built.backup, 'admin-token')})"`);

    // Every row of every table, as the source has it (before any server touches the target).
    const target = await postgresDump(databaseUrl);
    expect(target.dump).toEqual(sqliteDump(join(built.backup, 'registry.db'), target.types));
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    expect((await sql`SELECT secret FROM server_secret`)[0].secret).toBe(
      readFileSync(join(built.backup, 'secret'), 'utf8').trim(),
    );
    // The sequences continue past the copied ids.
    const [{ next }] = await sql`SELECT nextval(pg_get_serial_sequence('nodes', 'seq'))::int AS next`;
    expect(next).toBe(Math.max(...(await sql`SELECT seq FROM nodes`).map((r) => Number(r.seq))) + 1);
    await sql.end();

    // A second run into the same database is refused and changes nothing.
    const again = await runInProcess(['restore', built.backup], { env });
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('the target database already holds a registry');
    expect(again.stderr).toContain('restore into a new, empty database');
    expect((await postgresDump(databaseUrl)).dump).toEqual(target.dump);

    const instanceDir = tempDir();
    const served = await serve(['--port', '0', '--data-dir', instanceDir], {
      env: { ...env, NODEREG_ADMIN_TOKEN: built.adminToken },
    });
    await checkServed(
      served,
      built,
      { '2.0.0': archiveFile(built.backup, '2.0.0'), '1.0.0': archiveFile(built.backup, '1.0.0') },
      instanceDir,
    );
    // The AI proxy's result file came along: its URL answers the bytes.
    const status = await call(served.url, 'GET', `/proxy/img/v1/ai/skin-enhancer/${built.taskId}`, {
      token: built.bob.token,
    });
    const result = await fetch(status.body.data.generated[0]);
    expect(Buffer.from(await result.arrayBuffer())).toEqual(PNG);
    expect((await served.stop()).code).toBe(0);
  }, 120_000);

  it("an archive whose SHA-256 is not its version's stops the restore, and the target database stays empty", async () => {
    const databaseUrl = await (await postgresServer!).database();
    const tampered = join(tempDir(), 'tampered');
    cpSync(built.backup, tampered, { recursive: true });
    writeFileSync(
      archiveFile(tampered, '1.1.0'),
      Buffer.concat([readFileSync(archiveFile(tampered, '1.1.0')), Buffer.from('x')]),
    );
    const result = await runInProcess([
      'restore',
      tampered,
      '--database',
      databaseUrl,
      '--storage',
      join(tempDir(), 'archives'),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /the archive of alpha-node 1\.1\.0 \(.*\) has SHA-256 [0-9a-f]{64} \(\d+ bytes\), but its version says [0-9a-f]{64}/,
    );
    expect(await postgresRows(databaseUrl)).toBe(0);
  }, 60_000);

  it('prints a serve line that pastes as it reads, a quote in the URL included; a URL with a user is read from NODEREG_DATABASE_URL', async () => {
    const databaseUrl = `${await (await postgresServer!).database()}?application_name=Ada's%20restore`;
    expect(databaseUrl).toMatch(/^postgres:\/\/nodereg@/);
    const storage = join(tempDir(), 'archives');
    const restored = await runInProcess(['restore', built.backup, '--database', databaseUrl, '--storage', storage]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout + restored.stderr).not.toContain('nodereg@');
    expect(restored.stdout).toContain(
      '(with NODEREG_DATABASE_URL set to the --database URL first: its user and password are not printed)',
    );
    const serveLine = /^serve it: (.*)$/m.exec(restored.stdout)![1];
    const words = spawnSync(
      'sh',
      ['-c', `printf '%s\\n' ${serveLine.replace(/^NODEREG_ADMIN_TOKEN="[^"]*" nodereg /, '')}`],
      { encoding: 'utf8', env: { NODEREG_DATABASE_URL: databaseUrl } },
    );
    expect(words.stdout.split('\n').slice(0, -1), `${serveLine}\n${words.stderr}`).toEqual([
      'serve',
      '--database',
      databaseUrl,
      '--storage',
      storage,
    ]);
  }, 60_000);

  it('a database that does not exist on the server: exit 2 naming --database and how to create it, not "run the same restore again"', async () => {
    const databaseUrl = await (await postgresServer!).database();
    const missing = databaseUrl.replace(/\/([^/?]+)(\?|$)/, '/$1_never_created$2');
    expect(missing).not.toBe(databaseUrl);
    const result = await runInProcess([
      'restore',
      built.backup,
      '--database',
      missing,
      '--storage',
      join(tempDir(), 'archives'),
    ]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/--database: database "[^"]+_never_created" does not exist/);
    expect(result.stderr).toContain('createdb');
    expect(result.stderr).not.toContain('run the same restore again');
    // serve and --migrate-only say the same, with the same exit code.
    for (const args of [['--port', '0', '--storage', tempDir()], ['--migrate-only']]) {
      const served = await runInProcess(['serve', '--database', missing, ...args], {
        env: { NODEREG_ADMIN_TOKEN: 'nrg_u_x' },
      });
      expect(served.code, served.stderr).toBe(2);
      expect(served.stderr).toMatch(
        /--database: database "[^"]+_never_created" does not exist on that PostgreSQL server/,
      );
      expect(served.stderr).toMatch(/hint: create it first \(e\.g\. createdb.*\), then start it again/);
    }
    const migrated = await runInProcess(['serve', '--database', databaseUrl, '--migrate-only']);
    expect(migrated.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^made the PostgreSQL schema \(\d+ migrations\)$/),
      `migrations applied to ${databaseUrl.replace('nodereg@', '***@')} (--database)`,
    ]);
  }, 60_000);

  it('PostgreSQL frozen while the rows go in: restore gives up after its deadline, and the target stays empty', async () => {
    const pg = (await postgresServer!)!;
    const databaseUrl = await pg.database();
    // 200,000 more users: their rows take seconds to go in, so the freeze lands inside the transaction.
    const big = join(tempDir(), 'big');
    cpSync(built.backup, big, { recursive: true });
    const db = new Database(join(big, 'registry.db'));
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
             INSERT INTO users (id, name, created_at) SELECT 'bulk-' || i, 'bulk ' || i, '2026-01-01T00:00:00.000Z' FROM n`);
    db.close();
    onTestFinished(() => pg.signal('SIGCONT')); // (the file's server must be able to stop)
    // In-process with a short deadline: the CLI passes none, so RESTORE_DEADLINE_MS (30 s) there.
    const deadlineMs = 1_000;
    let frozenAt = 0;
    const failed = await restore({
      source: big,
      database: { kind: 'postgres', url: databaseUrl },
      storage: async () => createLocalArchiveStorage(join(tempDir(), 'archives')),
      say: (line) => {
        if (!frozenAt && line.includes('copying the rows of')) {
          pg.signal('SIGSTOP');
          frozenAt = performance.now();
        }
      },
      deadlineMs,
    }).then(
      () => undefined,
      (error: Error) => error,
    );
    const waited = performance.now() - frozenAt;
    pg.signal('SIGCONT');
    expect(frozenAt).toBeGreaterThan(0);
    expect(failed?.message).toBe('PostgreSQL did not answer within 1 s');
    expect(waited).toBeGreaterThanOrEqual(deadlineMs - 500);
    expect(waited).toBeLessThan(deadlineMs + 20_000);
    expect(await postgresRows(databaseUrl)).toBe(0);
  }, 120_000);

  it('a restore that fails on its way into PostgreSQL: exit 1 naming the database without its user, the target left as it was', async () => {
    const databaseUrl = `postgres://nodereg@127.0.0.1:${await closedPort()}/gone`;
    const result = await runInProcess([
      'restore',
      built.backup,
      '--database',
      databaseUrl,
      '--storage',
      join(tempDir(), 'archives'),
    ]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('restore into postgres://***@127.0.0.1:');
    expect(result.stderr).toContain('the target database was left as it was, run the same restore again');
    expect(result.stderr).not.toContain('nodereg@');
  }, 60_000);

  it.skipIf(!s3Server)(
    'a bucket that refuses stops the restore, and the target database stays empty; run again, it completes',
    async () => {
      const databaseUrl = await (await postgresServer!).database();
      const s3 = (await s3Server)!;
      const refused = await runInProcess(
        ['restore', built.backup, '--database', databaseUrl, '--storage', 's3://no-such-bucket/x'],
        { env: s3.env },
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('no such bucket');
      expect(await postgresRows(databaseUrl)).toBe(0);
      // (A password given with --database is not printed either: the serve line names the variable to set.)
      const again = await runInProcess(
        [
          'restore',
          built.backup,
          '--database',
          databaseUrl.replace('://nodereg@', '://nodereg:hunter2@'),
          '--storage',
          `s3://${await s3.bucket()}`,
        ],
        { env: s3.env },
      );
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout + again.stderr).not.toContain('hunter2');
      expect(again.stdout).toContain('nodereg serve --database "$NODEREG_DATABASE_URL"');
      expect(again.stdout).toContain(
        '(with NODEREG_DATABASE_URL set to the --database URL first: its user and password are not printed)',
      );
      expect(await postgresRows(databaseUrl)).toBeGreaterThan(0);
    },
    60_000,
  );
});

describe('restore into a new SQLite data dir', () => {
  it('carries every row, the archives, the secret and the admin token; served with --data-dir, it answers as the original did', async () => {
    const dir = join(tempDir(), 'grown');
    const restored = await runInProcess(['restore', built.backup, '--database', join(dir, 'registry.db')]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`serve it: nodereg serve --data-dir ${dir}\n`);
    expect(sqliteDump(join(dir, 'registry.db'))).toEqual(sqliteDump(join(built.backup, 'registry.db')));
    expect(readFileSync(join(dir, 'secret'), 'utf8')).toBe(readFileSync(join(built.backup, 'secret'), 'utf8').trim());
    expect(existsSync(join(dir, 'admin-token'))).toBe(true);

    const again = await runInProcess(['restore', built.backup, '--database', join(dir, 'registry.db')]);
    expect(again.code).toBe(3);

    const served = await serve(['--port', '0', '--data-dir', dir]);
    await checkServed(served, built, { '2.0.0': archiveFile(built.backup, '2.0.0') }, dir);
    // Search finds what it found: the full-text index was built by the target's own triggers.
    expect(
      (await call(served.url, 'GET', '/nodes/search?q=relights')).body.nodes.map((n: { id: string }) => n.id),
    ).toEqual(['alpha-node']);
    expect((await call(served.url, 'GET', '/nodes/search?q=shady')).body.total).toBe(0);
    expect((await served.stop()).code).toBe(0);
  }, 120_000);

  it('prints a serve line that pastes as it reads, whatever the paths hold (spaces, quotes)', async () => {
    const dir = join(tempDir(), "Ada's registry");
    const storage = join(tempDir(), 'the archives');
    const restored = await runInProcess([
      'restore',
      built.backup,
      '--database',
      join(dir, 'my registry.db'),
      '--storage',
      storage,
    ]);
    expect(restored.code, restored.stderr).toBe(0);
    const serveLine = /^serve it: (.*)$/m.exec(restored.stdout)![1];
    // The shell splits the pasted line into exactly these words.
    const words = spawnSync('sh', ['-c', `printf '%s\\n' ${serveLine.replace(/^nodereg /, '')}`], { encoding: 'utf8' });
    expect(words.stdout.split('\n').slice(0, -1)).toEqual([
      'serve',
      '--data-dir',
      dir,
      '--database',
      join(dir, 'my registry.db'),
      '--storage',
      storage,
    ]);
  }, 60_000);

  it('refuses a SOURCE that is not a data dir (exit 2), and one a running server holds (exit 3)', async () => {
    const empty = await runInProcess(['restore', tempDir(), '--database', join(tempDir(), 'x', 'registry.db')]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('is not a nodereg data dir: it has no registry.db');

    const running = await serve(['--port', '0', '--data-dir', built.dataDir]);
    const target = join(tempDir(), 'x', 'registry.db');
    const held = await runInProcess(['restore', built.dataDir, '--database', target]);
    // Run from the checkout, the hint's commands read `node bin/nodereg.js …`, both of them.
    const fromCheckout = spawnSync(process.execPath, [BIN, 'restore', built.dataDir, '--database', target], {
      env: cliEnv(tempDir()),
      encoding: 'utf8',
    });
    expect(fromCheckout.status).toBe(3);
    await checkHints(fromCheckout.stdout, fromCheckout.stderr);
    const invoked = /hint: .*`(.+) backup --data-dir \S+ \S+`, then `(.+) restore \S+ --database \S+`/.exec(
      fromCheckout.stderr,
    );
    expect(invoked?.[1], fromCheckout.stderr).toMatch(/^node .*nodereg\.js$/);
    expect(invoked?.[2]).toBe(invoked?.[1]);
    expect(held.code).toBe(3);
    expect(held.stderr).toContain('is open in a running server');
    expect(existsSync(join(target, '..'))).toBe(false);
    // The hint runs as printed: a snapshot of the running registry, then the same restore from it.
    const [backup, restored] = await runHints(held.stderr);
    expect(backup.argv).toEqual(['backup', '--data-dir', built.dataDir, `${built.dataDir}-snapshot`]);
    expect(backup.result.code, backup.result.stderr).toBe(0);
    expect(restored.argv).toEqual(['restore', `${built.dataDir}-snapshot`, '--database', target]);
    expect(restored.result.code, restored.result.stderr).toBe(0);
    // A database URL's password in its query is not printed either: the hint reads the URL from the variable.
    const queried = await runInProcess([
      'restore',
      built.dataDir,
      '--database',
      'postgres://127.0.0.1:1/db?password=hunter2',
      '--storage',
      tempDir(),
    ]);
    expect(queried.code).toBe(3);
    expect(queried.stderr).not.toContain('hunter2');
    expect(queried.stderr).toContain('--database "$NODEREG_DATABASE_URL"');
    // the first snapshot exists now: the hint names a new dir, which backup takes
    expect(queried.stderr).toContain(`backup --data-dir ${built.dataDir} ${built.dataDir}-snapshot-2\``);
    await running.stop();
  }, 60_000);
});
