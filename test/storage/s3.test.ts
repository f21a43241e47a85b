// `nodereg serve --storage s3://bucket/prefix` against a real S3-compatible server (s3rver) on
// 127.0.0.1: archives go to the bucket and come back from it, the upload streams with flat memory in
// the server, and a bucket it cannot use stops the start in plain words.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { CLAIM_KEY } from '../../src/server/archives/registry-claim.js';
import { s3ClientFromEnv, unresolvedHostHint } from '../../src/server/archives/s3-storage.js';
import { openDatabase } from '../../src/server/store/db.js';
import { runInProcess } from '../cli/in-process.js';
import { tempDir, type TestServer } from '../helpers.js';
import { testS3 } from '../s3.js';
import { call, createPublisher, createUser, makeZip, publish, uploadTo } from '../server/fixtures.js';
import { useServe } from '../server/serve-helper.js';

const serve = useServe();

const s3Server = testS3();
const MiB = 1024 * 1024;

/** Resident memory of a process, current (VmRSS) or its peak so far (VmHWM), from /proc. */
const memory = (pid: number, key: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${key}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

describe.skipIf(!s3Server)('serve --storage s3://', () => {
  it('stores archives in the bucket under the prefix and serves them from it, ranges too', async () => {
    const s3 = await s3Server!;
    const bucket = await s3.bucket();
    const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
    const served = await serve(
      ['--port', '0', '--data-dir', tempDir(), '--storage', `s3://${bucket}/registry/archives`],
      {
        env: { ...s3.env, NODEREG_ADMIN_TOKEN: adminToken },
      },
    );
    const server = { url: served.url, adminToken } as TestServer;
    const alice = await createUser(server, 'alice');
    await createPublisher(server, alice, 'alice-co');
    const zip = await makeZip({ 'node.py': '# in the bucket\n', 'data.bin': randomBytes(50_000) });
    const published = await publish(server, alice.token, 'alice-co', 'bucketed', '1.0.0');
    expect(published.status, published.text).toBe(201);
    expect((await uploadTo(published.body.signedUrl, zip)).status).toBe(200);

    const listed = await s3ClientFromEnv(s3.env).send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.Contents?.map((object) => object.Key)).toEqual([
      `registry/archives/${CLAIM_KEY}`,
      'registry/archives/alice-co/bucketed/1.0.0/node.zip',
    ]);
    const download = await fetch(`${served.url}/archives/alice-co/bucketed/1.0.0/node.zip`);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(zip)).toBe(true);
    const part = await fetch(`${served.url}/archives/alice-co/bucketed/1.0.0/node.zip`, {
      headers: { range: 'bytes=10-109' },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-109/${zip.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(zip.subarray(10, 110))).toBe(true);
    // the second upload of the version is refused before it reaches the bucket
    expect((await uploadTo(published.body.signedUrl, zip)).status).toBe(409);
    expect((await call(served.url, 'GET', '/nodes/bucketed/versions/1.0.0')).body.status).toBe(
      'NodeVersionStatusActive',
    );
    expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('a 100 MiB upload raises the server resident memory by less than 50 MiB', async () => {
    const s3 = await s3Server!;
    const dir = tempDir('nodereg-upload-');
    writeFileSync(join(dir, 'weights.bin'), randomBytes(100 * MiB));
    const zipPath = join(dir, 'node.zip');
    execFileSync('zip', ['-q0', zipPath, 'weights.bin'], { cwd: dir }); // stored: quick to build
    const size = statSync(zipPath).size;
    const bucket = await s3.bucket();
    /** A fresh server's growth of resident memory for one 100 MiB upload of version `version`. */
    const measure = async (version: string) => {
      const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
      const served = await serve(['--port', '0', '--data-dir', tempDir(), '--storage', `s3://${bucket}`], {
        env: { ...s3.env, NODEREG_ADMIN_TOKEN: adminToken },
      });
      const server = { url: served.url, adminToken } as TestServer;
      const owner = await createUser(server, `big${version[0]}`);
      await createPublisher(server, owner, `big-co${version[0]}`);
      // A first, small upload loads what every upload needs (the S3 client's signing, its connections).
      const warmUp = await publish(server, owner.token, `big-co${version[0]}`, 'weights', '0.1.0');
      expect((await uploadTo(warmUp.body.signedUrl, await makeZip())).status).toBe(200);
      const published = await publish(server, owner.token, `big-co${version[0]}`, 'weights', version);
      const before = memory(served.child.pid!, 'VmRSS');
      const uploaded = await fetch(published.body.signedUrl, {
        method: 'PUT',
        headers: { 'content-type': 'application/zip', 'content-length': String(size) },
        body: Readable.toWeb(createReadStream(zipPath)) as ReadableStream,
        duplex: 'half',
      } as RequestInit);
      expect(uploaded.status, await uploaded.clone().text()).toBe(200);
      const growth = memory(served.child.pid!, 'VmHWM') - before;
      expect(((await uploaded.json()) as { archive_size?: number }).archive_size).toBe(size);
      const download = await fetch(`${served.url}/archives/big-co${version[0]}/weights/${version}/node.zip`);
      const hash = createHash('sha256');
      for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
      expect(hash.digest('hex')).toBe(createHash('sha256').update(readFileSync(zipPath)).digest('hex'));
      expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      return growth;
    };
    // Garbage buffers wait for the collector, which a loaded shared machine starves: a run over the
    // bound is measured again on a fresh server (three at most), and the lowest growth counts.
    const growths: number[] = [];
    for (let attempt = 1; attempt <= 3 && !(growths.length && Math.min(...growths) < 50 * MiB); attempt++)
      growths.push(await measure(`${attempt}.0.0`));
    // Holding the archive would take over 100 MiB; streaming it through the spool file and one PUT does not.
    expect(Math.min(...growths)).toBeLessThan(50 * MiB);
  }, 180_000);

  it("with --log json every stderr line is JSON in an operator's environment: the SDK prints no notice of its own (Node 20)", async () => {
    const s3 = await s3Server!;
    // The environment an operator has: without the SDK's switch that the tests set for themselves.
    const { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _, ...env } = s3.env;
    const served = await serve(
      ['--port', '0', '--data-dir', tempDir(), '--storage', `s3://${await s3.bucket()}`, '--log', 'json'],
      { env },
    );
    expect((await fetch(`${served.url}/readyz`)).status).toBe(200);
    expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    const lines = served.stderr().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(served.stderr()).not.toContain('AWS SDK');
  });

  it('a bucket that does not exist stops the start with exit 1, naming the flag and the bucket', async () => {
    const s3 = await s3Server!;
    const result = await runInProcess(
      ['serve', '--port', '0', '--data-dir', tempDir(), '--storage', 's3://no-such-bucket/x'],
      { env: s3.env },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /cannot open --storage s3:\/\/no-such-bucket\/x: bucket no-such-bucket: no such bucket/,
    );
  });
});

// A host under .invalid never resolves: the SDK's getaddrinfo fails as it would for an AWS host out of reach, and nothing leaves the machine but that lookup.
describe('an S3 host that does not resolve', () => {
  it('stops serve and restore with exit 1 and a hint naming the endpoint variable that named it', async () => {
    const env = {
      AWS_ENDPOINT_URL_S3: 'http://nodereg-test.invalid:9000',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'y',
    };
    const hint =
      "hint: nodereg-test.invalid is the host of AWS_ENDPOINT_URL_S3 (http://nodereg-test.invalid:9000) and it does not resolve: set AWS_ENDPOINT_URL_S3 to your S3-compatible server's address, such as http://minio.internal:9000";
    const served = await runInProcess(
      ['serve', '--port', '0', '--data-dir', tempDir(), '--storage', 's3://registry-archives/x'],
      { env },
    );
    expect(served.code).toBe(1);
    expect(served.stderr).toContain(
      'cannot open --storage s3://registry-archives/x: bucket registry-archives: getaddrinfo ENOTFOUND nodereg-test.invalid',
    );
    expect(served.stderr).toContain(hint);
    const source = tempDir();
    openDatabase(join(source, 'registry.db')).close();
    writeFileSync(join(source, 'secret'), `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    const restored = await runInProcess(
      ['restore', source, '--database', join(tempDir(), 'registry.db'), '--storage', 's3://registry-archives/x'],
      { env },
    );
    expect(restored.code, restored.stderr).toBe(1);
    expect(restored.stderr).toContain(hint);
  });

  it('with no endpoint set, the hint says the registry went to AWS, in which region, and which variable points it elsewhere', () => {
    const error = Object.assign(new Error('getaddrinfo ENOTFOUND registry-archives.s3.eu-west-3.amazonaws.com'), {
      code: 'ENOTFOUND',
      hostname: 'registry-archives.s3.eu-west-3.amazonaws.com',
    });
    expect(unresolvedHostHint(error, { AWS_REGION: 'eu-west-3' })).toBe(
      "no S3 endpoint is set (AWS_ENDPOINT_URL_S3), so the registry went to AWS at registry-archives.s3.eu-west-3.amazonaws.com (region eu-west-3, from AWS_REGION), which does not resolve from here: for MinIO or another S3-compatible server set AWS_ENDPOINT_URL_S3=http://host:port; for AWS check AWS_REGION, and this machine's DNS and network",
    );
    expect(unresolvedHostHint(error, {})).toContain('(region us-east-1, the default: AWS_REGION is not set)');
    expect(unresolvedHostHint(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), {})).toBeUndefined();
  });
});
