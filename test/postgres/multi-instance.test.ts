// Two `nodereg serve` processes sharing one PostgreSQL database and one S3 bucket (s3rver), as behind
// a load balancer: whatever one instance decides, the other sees at once.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { CLAIM_KEY } from '../../src/server/archives/registry-claim.js';
import { s3ClientFromEnv } from '../../src/server/archives/s3-storage.js';
import postgres from 'postgres';
import { postgresMigrations } from '../../src/server/store/postgres-migrations.js';
import { runInProcess } from '../cli/in-process.js';
import { tempDir, type TestServer } from '../helpers.js';
import { heard, testPostgres } from '../postgres.js';
import { testS3 } from '../s3.js';
import { call, createPublisher, createUser, makeZip, publish, uploadTo } from '../server/fixtures.js';
import { useServe, type Served } from '../server/serve-helper.js';
import { eventually, startStandIn } from '../proxy/stand-ins.js';
import { CALLBACK_HEADERS } from '../../src/contract/limits.js';

const serve = useServe();

const postgresServer = testPostgres();
// Instances start on a copy of a migrated database, but where their own migrating (alone, or two at the
// same moment) is what a test holds to.
const s3Server = testS3();

describe.skipIf(!postgresServer)('two instances on one PostgreSQL and one bucket', () => {
  it('serve --migrate-only applies the migrations once, also when run twice at the same moment, and exits', async () => {
    const databaseUrl = await (await postgresServer!).database();
    const runs = await Promise.all(
      [1, 2].map(() => runInProcess(['serve', '--database', databaseUrl, '--migrate-only', '--data-dir', tempDir()])),
    );
    for (const run of runs) {
      expect(run.stderr).toContain(`migrations applied to ${databaseUrl.replace('nodereg@', '***@')} (--database)`);
      expect(run.code).toBe(0);
    }
    const sql = postgres(databaseUrl, { max: 1 });
    expect((await sql`SELECT name FROM schema_migrations ORDER BY version`).map((row) => row.name)).toEqual(
      postgresMigrations.map((m) => m.name),
    );
    await sql.end();
  });

  it('a data dir whose own registry is left behind by --database says so at start', async () => {
    const dataDir = tempDir();
    const local = await serve(['--port', '0', '--data-dir', dataDir]);
    await eventually(() => local.stderr().includes('callback key') || undefined, 'the start lines');
    expect(local.stderr()).not.toContain('does not serve');
    await local.stop();
    // (A storage of its own: DIR/archives is claimed by the dir's own registry, another one.)
    const grown = await serve([
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--database',
      await (await postgresServer!).migratedDatabase(),
      '--storage',
      tempDir(),
    ]);
    await eventually(() => grown.stderr().includes('callback key') || undefined, 'the start lines');
    expect(grown.stderr()).toContain(
      `warning: ${join(dataDir, 'registry.db')} holds a registry that this server does not serve (it serves --database); to move it there, stop the servers and run nodereg restore ${dataDir} --database URL --storage URL (into an empty database)`,
    );
    await grown.stop();
  });

  it('on PostgreSQL without --storage, says that the archives are in DIR/archives of this instance only; with --storage, says nothing of it', async () => {
    const databaseUrl = await (await postgresServer!).migratedDatabase();
    const dataDir = tempDir();
    const alone = await serve(['--port', '0', '--data-dir', dataDir, '--database', databaseUrl]);
    await eventually(() => alone.stderr().includes('callback key') || undefined, 'the start lines');
    expect(alone.stderr()).toContain(`archives: ${join(dataDir, 'archives')}`);
    expect(alone.stderr()).toContain(
      `warning: the archives are in ${join(dataDir, 'archives')}, on this instance only: every instance on this database must serve the same --storage (s3://bucket/prefix, or one shared directory), or an archive uploaded to one is missing (404) on the others`,
    );
    await alone.stop();
    const shared = await serve([
      '--port',
      '0',
      '--data-dir',
      tempDir(),
      '--database',
      databaseUrl,
      '--storage',
      tempDir(),
    ]);
    await eventually(() => shared.stderr().includes('callback key') || undefined, 'the start lines');
    expect(shared.stderr()).not.toContain('on this instance only');
    await shared.stop();
  });

  it('without NODEREG_ADMIN_TOKEN, instances with data dirs of their own keep the admin token the database has, also when they start together', async () => {
    const databaseUrl = await (await postgresServer!).migratedDatabase();
    const dirs = [tempDir(), tempDir()];
    const start = (dir: string) => serve(['--port', '0', '--data-dir', dir, '--database', databaseUrl]);
    const generatedBy = (instance: Served) =>
      /admin token \(shown once; also in \S+\): (\S+)/.exec(instance.stderr())?.[1];
    const isAdmin = async (instance: Served, token: string) =>
      (await call(instance.url, 'GET', '/users/me', { token })).body?.user?.admin === true;

    // One after the other: B finds A's token and keeps it, generating none (no file left in its dir).
    const a = await start(dirs[0]);
    const b = await start(dirs[1]);
    await eventually(
      () => (a.stderr().includes('callback key') && b.stderr().includes('callback key')) || undefined,
      'the start lines',
    );
    const token = generatedBy(a)!;
    expect(token).toMatch(/^nrg_u_/);
    expect(generatedBy(b)).toBeUndefined();
    expect(b.stderr()).toContain('admin token: kept the one the shared database has');
    expect(b.stderr()).toContain('set NODEREG_ADMIN_TOKEN');
    expect(readdirSync(dirs[1])).not.toContain('admin-token');
    expect([await isAdmin(a, token), await isAdmin(b, token)]).toEqual([true, true]);

    // Both restarted together, and again: the token still works on both.
    await Promise.all([a.stop(), b.stop()]);
    for (let round = 0; round < 2; round++) {
      const both = await Promise.all(dirs.map(start));
      expect([await isAdmin(both[0], token), await isAdmin(both[1], token)]).toEqual([true, true]);
      expect(both.map(generatedBy)).toEqual([undefined, undefined]);
      await Promise.all(both.map((instance) => instance.stop()));
    }

    // Two fresh instances started at the same moment on a fresh database: one generates, the other keeps it.
    const fresh = await (await postgresServer!).database();
    const pair = await Promise.all(
      [tempDir(), tempDir()].map((dir) => serve(['--port', '0', '--data-dir', dir, '--database', fresh])),
    );
    await eventually(
      () => pair.every((instance) => instance.stderr().includes('callback key')) || undefined,
      'the start lines',
    );
    const generated = pair.map(generatedBy).filter(Boolean) as string[];
    expect(generated).toHaveLength(1);
    expect([await isAdmin(pair[0], generated[0]), await isAdmin(pair[1], generated[0])]).toEqual([true, true]);
    await Promise.all(pair.map((instance) => instance.stop()));
  }, 60_000);

  it('on the default data dir, an admin-token file the shared database does not use is not saved into the CLI profile', async () => {
    const databaseUrl = await (await postgresServer!).migratedDatabase();
    const a = await serve(['--port', '0', '--data-dir', tempDir(), '--database', databaseUrl]);
    const live = /admin token \(shown once; also in \S+\): (\S+)/.exec(a.stderr())![1];
    // The default data dir holds a token of its own that this database never had (left by an earlier registry there).
    const home = tempDir('nodereg-home-');
    const defaultDir = join(home, '.local/share/nodereg');
    mkdirSync(defaultDir, { recursive: true });
    const stale = `nrg_u_${randomBytes(24).toString('hex')}`;
    writeFileSync(join(defaultDir, 'admin-token'), `${stale}\n`, { mode: 0o600 });
    const b = await serve(['--port', '0', '--data-dir', defaultDir, '--database', databaseUrl], { home });
    await eventually(() => b.stderr().includes('callback key') || undefined, 'the start lines');
    expect((await call(b.url, 'GET', '/users/me', { token: stale })).status).toBe(401);
    expect((await call(b.url, 'GET', '/users/me', { token: live })).status).toBe(200);
    expect(b.stderr()).not.toContain('saved the admin token');
    const token = await runInProcess(['config', 'get', 'token'], { home, env: { NODEREG_REGISTRY: b.url } });
    expect(token.stdout + token.stderr).not.toMatch(/nrg_u_…\(redacted\)/);
    // The file stays (the dir's own registry.db may still use it); the start line says what to do with it.
    expect(b.stderr()).toContain(`${join(defaultDir, 'admin-token')} holds another one, dead here (delete it`);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('an instance serving while a newer build migrates the database answers a publish 503 (retry), never 500, and the retry works', async () => {
    const databaseUrl = await (await postgresServer!).migratedDatabase();
    const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
    const served = await serve(['--port', '0', '--data-dir', tempDir(), '--database', databaseUrl], {
      env: { NODEREG_ADMIN_TOKEN: adminToken },
    });
    const server = { url: served.url, adminToken } as TestServer;
    const alice = await createUser(server, 'alice');
    await createPublisher(server, alice, 'alice-co');
    // Sequential publishes: each connection that served one holds the prepared statements of a publish.
    for (let patch = 0; patch < 3; patch++)
      expect((await publish(server, alice.token, 'alice-co', 'rolling', `1.0.${patch}`)).status).toBe(201);
    // What a newer build's migration may do while this instance serves (docs/postgres-s3.md: --migrate-only before a rollout).
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    await sql.unsafe(
      'ALTER TABLE versions ADD COLUMN from_a_newer_build text; ALTER TABLE users ADD COLUMN from_a_newer_build text; ALTER TABLE nodes ADD COLUMN from_a_newer_build text',
    );
    await sql.end();
    const statuses: number[] = [];
    for (let patch = 3; statuses.at(-1) !== 201 && statuses.length < 20; ) {
      const reply = await publish(server, alice.token, 'alice-co', 'rolling', `1.0.${patch}`);
      statuses.push(reply.status);
      if (reply.status === 503) expect(reply.headers.get('retry-after')).toBe('1');
      if (reply.status === 201) patch++;
    }
    expect(statuses[0]).toBe(503); // the connection that served the last publish
    expect(statuses).not.toContain(500);
    expect(statuses.at(-1)).toBe(201);
    expect(served.stderr()).not.toContain('internal error');
    expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('agree on publishes, uploads, downloads and revoked tokens', async () => {
    const databaseUrl = await (await postgresServer!).migratedDatabase();
    const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
    // One bucket for both; a shared archive dir where s3rver is not installed.
    const s3 = await s3Server;
    const storage = s3
      ? { ...s3.env, NODEREG_STORAGE_URL: `s3://${await s3.bucket()}/archives` }
      : { NODEREG_STORAGE_URL: join(tempDir(), 'archives') };
    const env = { NODEREG_ADMIN_TOKEN: adminToken, NODEREG_DATABASE_URL: databaseUrl, ...storage };
    // Started together: the migrations are applied once, under the advisory lock. B has no data dir:
    // with PostgreSQL and a storage URL an instance keeps nothing locally.
    const homeB = tempDir('nodereg-home-');
    const [a, b] = await Promise.all([
      serve(['--port', '0', '--data-dir', tempDir()], { env }),
      serve(['--port', '0'], { env, home: homeB }),
    ]);
    expect(b.stderr()).toContain('data dir: none');
    const as = (instance: Served) => ({ url: instance.url, adminToken }) as TestServer;

    const alice = await createUser(as(a), 'alice');
    await createPublisher(as(b), alice, 'alice-co');

    // 50 clients, half through each instance, publish one version and upload their own archive: one upload wins.
    const zips = await Promise.all(Array.from({ length: 50 }, (_, i) => makeZip({ 'node.py': `# client ${i}\n` })));
    const published = await Promise.all(
      zips.map((_, i) => publish(as(i % 2 ? b : a), alice.token, 'alice-co', 'shared-node', '1.0.0')),
    );
    for (const reply of published) expect(reply.status, reply.text).toBe(201);
    const uploads = await Promise.all(published.map((reply, i) => uploadTo(reply.body.signedUrl, zips[i])));
    const winners = uploads.flatMap((reply, i) => (reply.status === 200 ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const reply of uploads) if (reply.status !== 200) expect(reply.status, reply.text).toBe(409);

    // Published through A, uploaded through B (its signed URL names B), downloaded through A.
    const second = await publish(as(a), alice.token, 'alice-co', 'shared-node', '2.0.0');
    expect(second.status, second.text).toBe(201);
    const signedOnB = second.body.signedUrl.replace(a.url, b.url);
    const zip = await makeZip({ 'node.py': '# two\n' });
    expect((await uploadTo(signedOnB, zip)).status).toBe(200);
    const version = await call(a.url, 'GET', '/nodes/shared-node/versions/2.0.0');
    const download = await fetch(version.body.downloadUrl.replace(b.url, a.url));
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(zip)).toBe(true);
    const first = await fetch(`${a.url}/archives/alice-co/shared-node/1.0.0/node.zip`);
    expect(Buffer.from(await first.arrayBuffer()).equals(zips[winners[0]])).toBe(true);

    // A token revoked through A is refused through B once B hears the change's notice (on a connection of
    // its own, so a request sent the moment A answered may come first: waited for, heard()'s bound at most).
    // alice owns the node and may not review it: a reader does, through a token it then revokes
    const reader = await createUser(as(a), 'reader');
    const created = await call(b.url, 'POST', '/users/me/tokens', { token: reader.token, body: { name: 'laptop' } });
    expect(created.status, created.text).toBe(201);
    expect((await call(b.url, 'GET', '/users/me', { token: created.body.token })).status).toBe(200);
    expect((await call(b.url, 'POST', '/nodes/shared-node/reviews?star=2', { token: created.body.token })).status).toBe(
      200,
    );
    expect((await call(a.url, 'DELETE', `/users/me/tokens/${created.body.id}`, { token: reader.token })).status).toBe(
      204,
    );
    await heard(async () =>
      expect((await call(b.url, 'GET', '/users/me', { token: created.body.token })).status).toBe(401),
    );
    expect((await call(b.url, 'POST', '/nodes/shared-node/reviews?star=2', { token: created.body.token })).status).toBe(
      401,
    );

    // B keeps its answer for the node; a review and a node update through A are in B's reads once it hears them.
    const kept = await call(b.url, 'GET', '/nodes/shared-node');
    expect(
      (await call(b.url, 'GET', '/nodes/shared-node', { headers: { 'if-none-match': kept.headers.get('etag')! } }))
        .status,
    ).toBe(304);
    expect((await call(a.url, 'POST', '/nodes/shared-node/reviews?star=4', { token: reader.token })).status).toBe(200);
    await heard(async () => expect((await call(b.url, 'GET', '/nodes/shared-node')).body.rating).toBe(4));
    expect(
      (
        await call(a.url, 'PUT', '/publishers/alice-co/nodes/shared-node', {
          token: alice.token,
          body: { description: 'seen on B' },
        })
      ).status,
    ).toBe(200);
    await heard(async () => {
      const seen = await call(b.url, 'GET', '/nodes/shared-node', {
        headers: { 'if-none-match': kept.headers.get('etag')! },
      });
      expect(seen.status).toBe(200);
      expect(seen.body.description).toBe('seen on B');
    });
    // B keeps its list of the node's versions too; a changelog written through A is in B's list once heard.
    expect(
      (await call(b.url, 'GET', '/nodes/shared-node/versions')).body.map((v: { version: string }) => v.version),
    ).toEqual(['2.0.0', '1.0.0']);
    const versionId = version.body.id;
    expect(
      (
        await call(a.url, 'PUT', `/publishers/alice-co/nodes/shared-node/versions/${versionId}`, {
          token: alice.token,
          body: { changelog: "seen in B's list" },
        })
      ).status,
    ).toBe(200);
    await heard(async () =>
      expect((await call(b.url, 'GET', '/nodes/shared-node/versions')).body[0].changelog).toBe("seen in B's list"),
    );

    // A killed (kill -9) in the middle of an upload: the retry through B succeeds, and B serves it.
    const third = await publish(as(a), alice.token, 'alice-co', 'shared-node', '3.0.0');
    expect(third.status, third.text).toBe(201);
    const big = await makeZip({ 'weights.bin': randomBytes(4 * 1024 * 1024) });
    const cut = fetch(third.body.signedUrl, {
      method: 'PUT',
      headers: { 'content-type': 'application/zip', 'content-length': String(big.length) },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(big.subarray(0, big.length / 2)); // and never the rest
        },
      }),
      duplex: 'half',
    } as RequestInit).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await a.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await cut).toBeInstanceOf(Error);
    const retried = await uploadTo(third.body.signedUrl.replace(a.url, b.url), big);
    expect(retried.status, retried.text).toBe(200);
    const third3 = await fetch(`${b.url}/archives/alice-co/shared-node/3.0.0/node.zip`);
    expect(Buffer.from(await third3.arrayBuffer()).equals(big)).toBe(true);

    if (s3) {
      const listed = await s3ClientFromEnv(s3.env).send(
        new ListObjectsV2Command({ Bucket: storage.NODEREG_STORAGE_URL.split('/')[2] }),
      );
      expect(listed.Contents?.map((object) => object.Key).sort()).toEqual([
        `archives/${CLAIM_KEY}`,
        ...[1, 2, 3].map((major) => `archives/alice-co/shared-node/${major}.0.0/node.zip`),
      ]);
    }
    expect(await b.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(readdirSync(homeB)).toEqual([]);
  });

  it('deliver each callback as often as one instance would, never twice at once, in order per task', async () => {
    const databaseUrl = await (await postgresServer!).migratedDatabase();
    const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
    const s3 = await s3Server;
    const storage = s3
      ? { ...s3.env, NODEREG_STORAGE_URL: `s3://${await s3.bucket()}` }
      : { NODEREG_STORAGE_URL: join(tempDir(), 'archives') };
    const env = { NODEREG_ADMIN_TOKEN: adminToken, NODEREG_DATABASE_URL: databaseUrl, ...storage };
    // Every first attempt fails (503), so each delivery is retried, by whichever instance claims it.
    const active = new Map<string, number>();
    const attempts = new Map<string, number>();
    let overlapping = 0;
    const receiver = await startStandIn(async (request) => {
      const id = String(request.headers[CALLBACK_HEADERS.delivery.toLowerCase()]);
      const task = (request.json as { task_id: string }).task_id;
      if ((active.get(id) ?? 0) > 0 || (active.get(task) ?? 0) > 0) overlapping++;
      for (const key of [id, task]) active.set(key, (active.get(key) ?? 0) + 1);
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 30)); // a window for a second sender to overlap
      for (const key of [id, task]) active.set(key, active.get(key)! - 1);
      return { status: attempts.get(id) === 1 ? 503 : 200 };
    });
    const flags = ['--port', '0', '--sandbox-delay', '400', '--callback-backoff', '50ms'];
    const [a, b] = await Promise.all([
      serve([...flags, '--data-dir', tempDir()], { env }),
      serve([...flags, '--data-dir', tempDir()], { env }),
    ]);
    try {
      const alice = await createUser({ url: a.url, adminToken } as TestServer, 'alice');
      const image = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const submitted = await call((i % 2 ? b : a).url, 'POST', '/proxy/img/v1/ai/image-relight', {
          token: alice.token,
          body: { image, webhook_url: `${receiver.url}/hook` },
        });
        expect(submitted.status, submitted.text).toBe(200);
        ids.push(submitted.body.data.task_id);
      }
      // CREATED, IN_PROGRESS, COMPLETED for each task: three deliveries, each tried twice.
      await eventually(
        () => (receiver.requests.length >= ids.length * 3 * 2 ? true : undefined),
        'every callback delivered',
        20_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 300)); // any extra delivery would come now
      expect(receiver.requests).toHaveLength(ids.length * 3 * 2);
      expect([...attempts.values()].every((count) => count === 2)).toBe(true);
      expect(attempts.size).toBe(ids.length * 3);
      expect(overlapping).toBe(0);
      for (const id of ids) {
        const delivered = receiver.requests
          .filter((r) => (r.json as { task_id: string }).task_id === id)
          .map((r) => (r.json as { status: string }).status);
        expect(delivered).toEqual(['CREATED', 'CREATED', 'IN_PROGRESS', 'IN_PROGRESS', 'COMPLETED', 'COMPLETED']);
      }
      // A result made on one instance is served by the other (it lives in the storage).
      const done = await call(b.url, 'GET', `/proxy/img/v1/ai/image-relight/${ids[0]}`, { token: alice.token });
      const result = await fetch(done.body.data.generated[0].replace(a.url, b.url));
      expect(result.status).toBe(200);
      expect(Buffer.from(await result.arrayBuffer()).toString('base64')).toBe(image);
    } finally {
      await receiver.close();
      await a.stop('SIGTERM');
      await b.stop('SIGTERM');
    }
  });
});
