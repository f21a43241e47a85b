// A real S3-compatible server for the tests: s3rver (a devDependency, plain JavaScript, the S3 REST API
// over a temp dir) on 127.0.0.1 and a free port, started in the test process. One per test file at
// most; each test gets a fresh bucket of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

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

/** The file's S3 server, started on first use; undefined (with a loud message) when s3rver is not installed. */
export function testS3(): Promise<TestS3> | undefined {
  if (!installed()) {
    console.warn('\n*** s3rver is not installed (npm ci installs it): the S3 suites are SKIPPED. ***\n');
    return undefined;
  }
  if (!started) {
    const server = start();
    started = server.then((s) => s.handle);
    afterAll(async () => (await server).stop());
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
