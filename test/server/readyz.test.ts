// /readyz checks the archive storage too, as a load balancer expects of an instance it sends
// downloads and uploads to: the data dir's archives gone (a volume not mounted) or the bucket out of
// reach is a 503, and back again a 200. The check is kept a while, so a flood of probes costs the
// bucket one HEAD, not one each. The bucket is s3rver on 127.0.0.1 behind an HTTP relay.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAIM_KEY } from '../../src/server/archives/registry-claim.js';
import { createS3ArchiveStorage } from '../../src/server/archives/s3-storage.js';
import { createLocalArchiveStorage, type ArchiveStorage } from '../../src/server/archives/storage.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { httpRelay, testS3 } from '../s3.js';
import { call, createPublisher, createUser, expectError, publishAndUpload } from './fixtures.js';

const s3Server = testS3();

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

const logged: { line: string; level?: string }[] = [];
const log = (line: string, level?: string) => void logged.push({ line, level });

describe('/readyz and the archive storage', () => {
  it("the data dir's archives gone: 503, a warn line naming the dir; made again: 200", async () => {
    logged.length = 0;
    const server = await startServer({ log, accessLog: false, readyStorageKeep: 0 });
    servers.push(server);
    expect((await call(server.url, 'GET', '/readyz')).status).toBe(200);

    const archives = join(server.dataDir, 'archives');
    rmSync(archives, { recursive: true });
    const refused = await call(server.url, 'GET', '/readyz');
    expectError(refused, 503, 'unavailable');
    expect(refused.text).not.toContain(archives); // where, and what, is for the log only
    expect(logged).toContainEqual({
      level: 'warn',
      line: `archive storage unavailable (the archive dir ${archives} is missing); check that the dir is there (a volume not mounted?) and serve may write it: answered 503`,
    });
    expect((await call(server.url, 'GET', '/healthz')).status).toBe(200);

    mkdirSync(join(archives, '.tmp'), { recursive: true });
    expect((await call(server.url, 'GET', '/readyz')).status).toBe(200);
  });

  it('a bucket whose host does not resolve (under .invalid): 503, not an internal error', async () => {
    logged.length = 0;
    const env = {
      AWS_ENDPOINT_URL_S3: 'http://nodereg-test.invalid:9000',
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'y',
    };
    // The claim checked at start (on a dir here: a host that never resolved would stop the start), then
    // every call to the bucket meets a host that does not resolve.
    const bucket = createS3ArchiveStorage({ bucket: 'registry-archives', prefix: '', env });
    const claims = createLocalArchiveStorage(tempDir());
    const archives: ArchiveStorage = {
      ...bucket,
      writeOnce: claims.writeOnce,
      open: (key, range) => (key === CLAIM_KEY ? claims.open(key, range) : bucket.open(key, range)),
    };
    const server = await startServer({
      archives,
      log,
      accessLog: false,
    });
    servers.push(server);
    expectError(await call(server.url, 'GET', '/readyz'), 503, 'unavailable');
    expect(logged).toContainEqual({
      level: 'warn',
      line: expect.stringMatching(
        /^archive storage unavailable \(getaddrinfo ENOTFOUND nodereg-test\.invalid\); check .*: answered 503$/,
      ),
    });
  });

  it.skipIf(!s3Server)(
    'the bucket gone: 503; a flood of probes within the kept time costs the bucket one HEAD',
    async () => {
      const s3 = await s3Server!;
      const bucket = await s3.bucket();
      const relay = await httpRelay(s3.env.AWS_ENDPOINT_URL_S3);
      const storage = (prefix: string) =>
        createS3ArchiveStorage({ bucket, prefix, env: { ...s3.env, AWS_ENDPOINT_URL_S3: relay.url } });
      const kept = await startServer({ archives: storage('kept'), accessLog: false, readyStorageKeep: 600_000 });
      const fresh = await startServer({ archives: storage('fresh'), log, accessLog: false, readyStorageKeep: 0 });
      servers.push(kept, fresh);
      const bucketHeads = () => relay.requests.filter((line) => line === `HEAD /${bucket}/`).length;

      const flood = await Promise.all(Array.from({ length: 40 }, () => call(kept.url, 'GET', '/readyz')));
      for (let i = 0; i < 20; i++) flood.push(await call(kept.url, 'GET', '/readyz'));
      expect(flood.map((reply) => reply.status)).toEqual(flood.map(() => 200));
      expect(bucketHeads(), relay.requests.join('\n')).toBe(1);

      relay.mode = 'no-bucket';
      logged.length = 0;
      expectError(await call(fresh.url, 'GET', '/readyz'), 503, 'unavailable');
      expect(
        logged.some(
          ({ level, line }) =>
            level === 'warn' &&
            /^archive storage unavailable \(.*\); check that the bucket exists, its endpoint answers and it takes the keys: answered 503$/.test(
              line,
            ),
        ),
      ).toBe(true);
      // the kept answer stands for its time: no HEAD more
      const heads = bucketHeads();
      expect((await call(kept.url, 'GET', '/readyz')).status).toBe(200);
      expect(bucketHeads()).toBe(heads);

      relay.mode = 'relay';
      expect((await call(fresh.url, 'GET', '/readyz')).status).toBe(200);
    },
  );

  it.skipIf(!s3Server)(
    "a bucket that takes connections and never answers: /readyz and a download are 503 within the server's own deadlines; /healthz stays up",
    async () => {
      const s3 = await s3Server!;
      const relay = await httpRelay(s3.env.AWS_ENDPOINT_URL_S3);
      // The server's default deadlines (S3_TIMEOUTS), not shorter ones: they are what this holds to.
      const archives = createS3ArchiveStorage({
        bucket: await s3.bucket(),
        prefix: 'archives',
        env: { ...s3.env, AWS_ENDPOINT_URL_S3: relay.url },
      });
      const server = await startServer({ archives, log, accessLog: false, readyStorageKeep: 0 });
      servers.push(server);
      const alice = await createUser(server, 'alice');
      await createPublisher(server, alice, 'acme');
      await publishAndUpload(server, alice.token, 'acme', 'kept', '1.0.0');
      expect((await call(server.url, 'GET', '/readyz')).status).toBe(200);

      relay.mode = 'hang';
      const timed = async (path: string) => {
        const started = Date.now();
        const reply = await call(server.url, 'GET', path);
        return { reply, ms: Date.now() - started };
      };
      const [ready, download] = await Promise.all([timed('/readyz'), timed('/archives/acme/kept/1.0.0/node.zip')]);
      expectError(ready.reply, 503, 'unavailable');
      expectError(download.reply, 503, 'unavailable');
      expect(download.reply.headers.get('retry-after')).toMatch(/^\d+$/);
      // Wide bounds (the box is loaded): without deadlines of their own these took the SDK's retries, 39 s.
      expect(ready.ms).toBeLessThan(15_000);
      expect(download.ms).toBeLessThan(15_000);
      expect((await call(server.url, 'GET', '/healthz')).status).toBe(200);

      relay.mode = 'relay';
      expect((await call(server.url, 'GET', '/readyz')).status).toBe(200);
    },
    60_000,
  );
});
