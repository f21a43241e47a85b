// A real S3-compatible server for the tests: s3rver (a devDependency, plain JavaScript, the S3 REST API
// over a temp dir) on 127.0.0.1 and a free port, started in the test process. One per test file at
// most; each test gets a fresh bucket of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createHttpServer, request, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, onTestFinished } from 'vitest';

export interface TestS3 {
  /** AWS_ENDPOINT_URL_S3, AWS_REGION and the keys, as an instance reads them. */
  env: Record<string, string>;
  /** A fresh, empty bucket's name. */
  bucket(): Promise<string>;
}

function installed(): boolean {
  try {
    createRequire(import.meta.url).resolve('s3rver');
    return true;
  } catch {
    return false;
  }
}

let started: Promise<TestS3> | undefined;

// The SDK's notice that its 2027 releases need Node 22, in this process too.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * The file's S3 server, started on first use. When s3rver is not installed: in CI (CI set) an error, so
 * the suite fails rather than skips; elsewhere undefined, with a loud message, and its tests skip.
 */
export function testS3(): Promise<TestS3> | undefined {
  if (!installed()) {
    const missing = 's3rver is not installed (npm ci installs it).';
    if (process.env.CI) throw new Error(`${missing} In CI the S3 suites must run.`);
    console.warn(`\n*** ${missing} The S3 suites are SKIPPED. ***\n`);
    return undefined;
  }
  if (!started) {
    const server = start();
    started = server.then((s) => s.handle);
    // After the file's last test; the next file of a shared test process starts its own.
    afterAll(async () => {
      started = undefined;
      await (await server).stop();
    }, 120_000);
  }
  return started;
}

async function start(): Promise<{ handle: TestS3; stop(): Promise<void> }> {
  const { default: S3rver } = await import('s3rver');
  const dir = mkdtempSync(join(tmpdir(), 'nodereg-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true });
  const { port } = await server.run();
  const env = {
    AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    // The SDK's notice that its 2027 releases need Node 22 (the tests compare stderr).
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
  const { s3ClientFromEnv } = await import('../src/server/archives/s3-storage.js');
  const client = s3ClientFromEnv(env);
  let count = 0;
  return {
    handle: {
      env,
      async bucket() {
        const name = `test-bucket-${++count}`;
        await client.send(new CreateBucketCommand({ Bucket: name }));
        return name;
      },
    },
    async stop() {
      client.destroy();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * An HTTP relay to `target` whose `mode` decides: relay, answer 500 or 403 (as S3 does, in XML), never
 * answer, or relay as an S3-compatible server may: ignoring Range (`whole`), or without Content-Length (`chunked`).
 */
export async function httpRelay(target: string) {
  const relay = {
    mode: 'relay' as 'relay' | '500' | '403' | 'hang' | 'whole' | 'chunked' | 'put-dropped' | 'no-bucket',
    url: '',
    server: undefined as HttpServer | undefined,
    requests: [] as string[],
  };
  const upstream = new URL(target);
  relay.server = createHttpServer((req, res) => {
    relay.requests.push(`${req.method} ${req.url}`);
    if (relay.mode === 'hang') return void req.resume();
    if (relay.mode === '500') {
      req.resume();
      res.writeHead(500, { 'content-type': 'application/xml' });
      return void res.end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>',
      );
    }
    if (relay.mode === '403') {
      req.resume();
      res.writeHead(403, { 'content-type': 'application/xml' });
      return void res.end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>',
      );
    }
    // A look-alike or a captive proxy: the PUT is answered as stored (with an ETag) and nothing is.
    if (relay.mode === 'put-dropped' && req.method === 'PUT') {
      req.resume();
      res.writeHead(200, { etag: '"d41d8cd98f00b204e9800998ecf8427e"' });
      return void res.end();
    }
    // The bucket deleted (or a wrong one configured): S3's 404 NoSuchBucket, as it answers every request then.
    if (relay.mode === 'no-bucket') {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/xml' });
      return void res.end(
        req.method === 'HEAD'
          ? undefined
          : '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>',
      );
    }
    const { range, ...unranged } = req.headers;
    const headers = relay.mode === 'whole' ? unranged : req.headers;
    const forward = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer) => {
        const { 'content-length': length, ...unmeasured } = answer.headers;
        res.writeHead(
          answer.statusCode!,
          relay.mode === 'chunked' && req.method === 'GET' ? unmeasured : answer.headers,
        );
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => relay.server!.listen(0, '127.0.0.1', resolve));
  relay.url = `http://127.0.0.1:${(relay.server.address() as AddressInfo).port}`;
  // closed when the test that made it ends, pass or fail (a hanging relay holds its connections open)
  onTestFinished(() => {
    relay.server!.close();
    relay.server!.closeAllConnections();
  });
  return relay;
}
