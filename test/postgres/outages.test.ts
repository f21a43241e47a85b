// A registry on PostgreSQL and S3 whose database or bucket goes away while it serves: every answer is
// a clear 503 in the error shape (never a 500, a crash or a hang), an upload cut by the bucket can be
// retried, and the server answers again once they are back. PostgreSQL and s3rver are real; between
// them and the server sits a stand-in for the network (a TCP relay that can be cut, an HTTP relay
// that can answer 500 or nothing).
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { createS3ArchiveStorage, s3ClientFromEnv } from '../../src/server/archives/s3-storage.js';
import { STALE_CLAIM_MS } from '../../src/server/store/registry-store.js';
import { runCli, startServer, tempDir, type TestServer } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';
import { eventually } from '../proxy/stand-ins.js';
import { testPostgres } from '../postgres.js';
import { httpRelay, testS3 } from '../s3.js';
import {
  call,
  createPublisher,
  createUser,
  expectError,
  makeZip,
  publishAndUpload,
  uploadTo,
} from '../server/fixtures.js';
import { expectUnavailable, registryWithNode } from './outage-fixtures.js';
import { useServe, type Served } from '../server/serve-helper.js';

const serve = useServe();

// The run's cluster: the network to it is cut here, never the server (frozen-database.test.ts freezes its own).
// Each instance starts on a copy of a migrated database: its migrations are not what this file holds to.
const postgresServer = testPostgres();
const s3Server = testS3();

/** A TCP relay to `target` on a fixed port: cut() refuses and drops every connection, restore() relays again. */
async function tcpRelay(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((socket) => {
        const upstream = connect(Number(target.port), target.hostname);
        for (const s of [socket, upstream]) {
          sockets.add(s);
          s.on('error', () => {}).on('close', () => sockets.delete(s));
        }
        socket.pipe(upstream).pipe(socket);
        socket.on('close', () => upstream.destroy());
        upstream.on('close', () => socket.destroy());
      }).listen(port, '127.0.0.1', () => {
        port = (server!.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  // closed when the test that made it ends, pass or fail: the file may share its worker process with others
  onTestFinished(() => {
    server?.close();
    for (const socket of sockets) socket.destroy();
  });
  return {
    port,
    cut: () =>
      new Promise<void>((resolve) => {
        server!.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
    restore: listen,
  };
}

/** An instance's environment: a fresh database, and a fresh bucket reached through an HTTP relay. */
async function behindBucketRelay() {
  const s3 = await s3Server!;
  const relay = await httpRelay(s3.env.AWS_ENDPOINT_URL_S3);
  const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
  const env = {
    ...s3.env,
    AWS_ENDPOINT_URL_S3: relay.url,
    NODEREG_ADMIN_TOKEN: adminToken,
    NODEREG_DATABASE_URL: await (await postgresServer!).migratedDatabase(),
    NODEREG_STORAGE_URL: `s3://${await s3.bucket()}/archives`,
  };
  return { relay, adminToken, env };
}

describe.skipIf(!postgresServer || !s3Server)('nodereg serve when PostgreSQL or the bucket goes away', () => {
  it('PostgreSQL cut while serving: reads, writes, downloads and uploads are 503 at once, and all work again when it is back', async () => {
    const database = new URL(await (await postgresServer!).migratedDatabase());
    const relay = await tcpRelay(database);
    // A password in the URL (PostgreSQL trusts local connections here, so any password does).
    const databaseUrl = `postgres://${database.username}:pw-${randomBytes(6).toString('hex')}@127.0.0.1:${relay.port}${database.pathname}`;
    const s3 = await s3Server!;
    const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
    const env = {
      ...s3.env,
      NODEREG_ADMIN_TOKEN: adminToken,
      NODEREG_DATABASE_URL: databaseUrl,
      NODEREG_STORAGE_URL: `s3://${await s3.bucket()}/archives`,
    };
    const served = await serve(['--port', '0'], { env });
    const { reader, pending, zip } = await registryWithNode({ url: served.url, adminToken } as TestServer);
    expect((await call(served.url, 'GET', '/readyz')).body).toMatchObject({ ok: true });

    await relay.cut();
    const started = Date.now();
    // ready no longer, for a load balancer, while alive
    expectUnavailable(await call(served.url, 'GET', '/readyz'));
    expect((await call(served.url, 'GET', '/healthz')).status).toBe(200);
    expectUnavailable(await call(served.url, 'GET', '/nodes/kept-node'));
    expectUnavailable(await call(served.url, 'GET', '/nodes?limit=5'));
    expectUnavailable(await call(served.url, 'GET', '/archives/alice-co/kept-node/1.0.0/node.zip'));
    expectUnavailable(await call(served.url, 'POST', '/nodes/kept-node/reviews?star=4', { token: reader.token }));
    expectUnavailable(await uploadTo(pending.body.signedUrl, zip));
    expect(Date.now() - started).toBeLessThan(20_000); // answered, not held until a timeout
    expect(served.child.exitCode).toBeNull();

    await relay.restore();
    expect((await call(served.url, 'GET', '/readyz')).status).toBe(200);
    expect((await call(served.url, 'POST', '/nodes/kept-node/reviews?star=4', { token: reader.token })).status).toBe(
      200,
    );
    expect((await uploadTo(pending.body.signedUrl, zip)).status).toBe(200);
    const download = await fetch(`${served.url}/archives/alice-co/kept-node/1.1.0/node.zip`);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(zip);

    // The log names the database without its password.
    expect(served.stderr()).toContain(`database: postgres://***@127.0.0.1:${relay.port}${database.pathname}`);
    expect(served.stderr()).not.toContain(new URL(databaseUrl).password);
    expect(served.stderr()).not.toMatch(/internal error/);
    // Each 503 line names the backend out of reach, and what to check; the public answer does not.
    expect(served.stderr()).toContain(
      `database postgres://***@127.0.0.1:${relay.port}${database.pathname} unavailable (`,
    );
    expect(served.stderr()).toContain(
      'check that the database runs, is reachable and takes the credentials: answered 503',
    );
    expect(served.stderr()).not.toContain('archive storage s3://');
    expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('PostgreSQL cut while an archive is on its way: 503, the received file is not left behind, and the upload can be retried', async () => {
    const database = new URL(await (await postgresServer!).migratedDatabase());
    const relay = await tcpRelay(database);
    const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
    const dataDir = tempDir();
    const env = {
      NODEREG_ADMIN_TOKEN: adminToken,
      NODEREG_DATABASE_URL: `postgres://${database.username}@127.0.0.1:${relay.port}${database.pathname}`,
    };
    const served = await serve(['--port', '0', '--data-dir', dataDir], { env });
    const { pending, zip } = await registryWithNode({ url: served.url, adminToken } as TestServer);

    // The first half of the archive, then PostgreSQL goes away, then the rest.
    let sendRest!: () => void;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(zip.subarray(0, 100));
        sendRest = () => {
          controller.enqueue(zip.subarray(100));
          controller.close();
        };
      },
    });
    const answer = fetch(pending.body.signedUrl, {
      method: 'PUT',
      body,
      duplex: 'half',
      headers: { 'content-type': 'application/zip' },
    } as RequestInit);
    await eventually(
      () => readdirSync(join(dataDir, 'archives', '.tmp')).length || undefined,
      'the upload being received',
    );
    await relay.cut();
    sendRest();
    const reply = await answer;
    expect(reply.status, await reply.text()).toBe(503);
    expect(readdirSync(join(dataDir, 'archives', '.tmp'))).toEqual([]);

    await relay.restore();
    expect((await uploadTo(pending.body.signedUrl, zip)).status).toBe(200);
    expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 60_000);

  // 403: keys the bucket no longer takes (AccessDenied), no fault of the client either (it was a 500 `internal`).
  // put-dropped: a look-alike or a captive proxy answers the PUT 200 and stores nothing (it was a 200 with the version Active and no archive).
  it.for(['500', '403', 'put-dropped'] as const)(
    "the bucket answering %s: downloads and uploads are 503, and the same upload URL works once the bucket is back; stderr has serve's lines only",
    { timeout: 60_000 },
    async (answer) => {
      const { relay, adminToken, env } = await behindBucketRelay();
      let served: Served | undefined;
      served = await serve(['--port', '0', '--log', 'json'], { env });
      const { alice, pending, zip } = await registryWithNode({ url: served.url, adminToken } as TestServer);

      relay.mode = answer;
      if (answer !== 'put-dropped')
        expectUnavailable(await call(served.url, 'GET', '/archives/alice-co/kept-node/1.0.0/node.zip'));
      expectUnavailable(await uploadTo(pending.body.signedUrl, zip));
      // Nothing half-stored: the version has no archive and is still pending.
      const version = await call(served.url, 'GET', '/nodes/kept-node/versions/1.1.0', { token: alice.token });
      expect(version.body).toMatchObject({ status: 'NodeVersionStatusPending' });
      expect(version.body.archive_sha256).toBeUndefined();

      relay.mode = 'relay';
      const retried = await uploadTo(pending.body.signedUrl, zip);
      expect(retried.status, retried.text).toBe(200);
      const download = await fetch(`${served.url}/archives/alice-co/kept-node/1.1.0/node.zip`);
      expect(Buffer.from(await download.arrayBuffer())).toEqual(zip);
      expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      // With --log json every line is serve's JSON: nothing the S3 SDK prints of its own (it warned of a "non-retryable streaming request").
      for (const line of served.stderr().trim().split('\n')) expect(() => JSON.parse(line), line).not.toThrow();
      // Each 503 is said once, at level warn (an operator filtering on the level sees the outage), beside its access line.
      const unavailable = served
        .stderr()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { level: string; message?: string })
        .filter((line) => line.message?.endsWith('answered 503'));
      expect(unavailable.length).toBeGreaterThan(0);
      for (const line of unavailable) expect(line.level, line.message).toBe('warn');
      for (const line of unavailable)
        expect(line.message).toMatch(
          /^archive storage s3:\/\/\S+\/archives unavailable \(.*\); check that the bucket exists, its endpoint answers and it takes the keys: answered 503$/,
        );
      if (answer === 'put-dropped')
        expect(served.stderr()).toMatch(
          /answered the PUT of \S+ \(\d+ bytes\) as stored, and stored nothing\); check [^"]*: answered 503/,
        );
    },
  );

  it('a bucket gone (NoSuchBucket) is 503 for downloads and uploads, the registry\'s fault; a key gone from a live bucket stays 404 "missing"', {
    timeout: 60_000,
  }, async () => {
    const { relay, adminToken, env } = await behindBucketRelay();
    const served = await serve(['--port', '0'], { env });
    const { pending, zip } = await registryWithNode({ url: served.url, adminToken } as TestServer);

    relay.mode = 'no-bucket';
    expectUnavailable(await call(served.url, 'GET', '/archives/alice-co/kept-node/1.0.0/node.zip'));
    expectUnavailable(await uploadTo(pending.body.signedUrl, zip));

    relay.mode = 'relay';
    const s3 = await s3Server!;
    const [, bucket, prefix] = /^s3:\/\/([^/]+)\/(.*)$/.exec(env.NODEREG_STORAGE_URL)!;
    const client = s3ClientFromEnv(s3.env);
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${prefix}/alice-co/kept-node/1.0.0/node.zip` }));
    client.destroy();
    expectError(await call(served.url, 'GET', '/archives/alice-co/kept-node/1.0.0/node.zip'), 404, 'not_found');
    expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('an upload killed (SIGKILL) while its archive goes to the bucket: after a restart, publish says the version is held, not that it is published', async () => {
    const { relay, adminToken, env } = await behindBucketRelay();
    const first = await serve(['--port', '0'], { env });
    const { alice, pending, zip } = await registryWithNode({ url: first.url, adminToken } as TestServer);
    relay.mode = 'hang';
    void uploadTo(pending.body.signedUrl, zip).catch(() => {});
    await eventually(
      // The commit's first call to the bucket for the key (a HEAD: archives are written once), or its PUT.
      () => relay.requests.find((line) => /^(PUT|HEAD) /.test(line) && line.includes('/kept-node/1.1.0/')),
      'the archive on its way to the bucket',
    );
    await first.stop('SIGKILL');
    relay.mode = 'relay';

    const second = await serve(['--port', '0'], { env });
    const project = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "kept-node"\nversion = "1.1.0"\n\n[tool.nodereg]\npublisher = "alice-co"\n',
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    });
    // The dead upload holds the version for 10 minutes: waiting out the default window (15 s) for its check would change nothing.
    const result = await runCli(['publish', project, '--retry-window', '1s'], {
      env: { NODEREG_REGISTRY: second.url, NODEREG_TOKEN: alice.token },
    });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain('another upload of version 1.1.0 of node kept-node is in progress');
    expect(result.stderr).toContain(`holds the version for up to ${STALE_CLAIM_MS / 60_000} minutes`);
    expect(result.stderr).toContain('nodereg admin release-claim kept-node 1.1.0');
    expect(result.stderr).not.toContain('is already published');
    expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('a bucket answering 500 at start: exit 1 naming the flag, the bucket and the answer', async () => {
    const { relay, env } = await behindBucketRelay();
    relay.mode = '500';
    const result = await runCli(['serve', '--port', '0'], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error: cannot open NODEREG_STORAGE_URL s3:\/\/test-bucket-\d+\/archives: bucket test-bucket-\d+: the S3 server answered HTTP 500\n/,
    );
  });

  it('a bucket that ignores Range or sends no Content-Length (as HTTP allows): downloads and their ranges are still the right bytes', async () => {
    const s3 = await s3Server!;
    const relay = await httpRelay(s3.env.AWS_ENDPOINT_URL_S3);
    const archives = createS3ArchiveStorage({
      bucket: await s3.bucket(),
      prefix: 'archives',
      env: { ...s3.env, AWS_ENDPOINT_URL_S3: relay.url },
    });
    const server = await startServer({ archives, dataDir: tempDir() });
    try {
      const alice = await createUser(server, 'alice');
      await createPublisher(server, alice, 'alice-co');
      const zip = await makeZip({ 'node.py': '# kept\n', 'data.bin': randomBytes(5000) });
      await publishAndUpload(server, alice.token, 'alice-co', 'kept-node', '1.0.0', {}, zip);
      const url = `${server.url}/archives/alice-co/kept-node/1.0.0/node.zip`;
      for (const mode of ['whole', 'chunked'] as const) {
        relay.mode = mode;
        const download = await fetch(url);
        expect([mode, download.status, Buffer.from(await download.arrayBuffer()).equals(zip)]).toEqual([
          mode,
          200,
          true,
        ]);
        const part = await fetch(url, { headers: { range: 'bytes=100-1099' } });
        expect([mode, part.status, part.headers.get('content-range')]).toEqual([
          mode,
          206,
          `bytes 100-1099/${zip.length}`,
        ]);
        expect(Buffer.from(await part.arrayBuffer()).equals(zip.subarray(100, 1100)), mode).toBe(true);
      }
    } finally {
      await server.close();
    }
  }, 60_000);

  it('a bucket that never answers: a download is 503 after the timeouts, not held forever', async () => {
    const s3 = await s3Server!;
    const relay = await httpRelay(s3.env.AWS_ENDPOINT_URL_S3);
    const bucket = await s3.bucket();
    // In-process, with short timeouts: the server's own (10 s of silence, three tries) would make this test slow.
    const archives = createS3ArchiveStorage({
      bucket,
      prefix: 'archives',
      env: { ...s3.env, AWS_ENDPOINT_URL_S3: relay.url },
      timeouts: { connectionTimeout: 500, socketTimeout: 500 },
    });
    const logged: string[] = [];
    const server = await startServer({ archives, dataDir: tempDir(), log: (line) => void logged.push(line) });
    try {
      const alice = await createUser(server, 'alice');
      await createPublisher(server, alice, 'alice-co');
      await publishAndUpload(server, alice.token, 'alice-co', 'kept-node', '1.0.0');
      relay.mode = 'hang';
      const started = Date.now();
      expectUnavailable(await call(server.url, 'GET', '/archives/alice-co/kept-node/1.0.0/node.zip'));
      expect(Date.now() - started).toBeLessThan(15_000);
      // A timeout of the S3 client is the storage's, not the database's (no URL given: named by its kind).
      expect(logged.filter((line) => line.endsWith('answered 503'))).toEqual([
        expect.stringMatching(/^archive storage unavailable \(/),
      ]);
      relay.mode = 'relay';
      expect((await call(server.url, 'GET', '/archives/alice-co/kept-node/1.0.0/node.zip')).status).toBe(200);
    } finally {
      await server.close();
    }
  }, 60_000);
});
