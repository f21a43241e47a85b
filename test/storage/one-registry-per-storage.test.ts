// Storage that cannot mix (issue [operate], DESIGN.md §16): each registry keeps an id in its database
// and claims its archive storage with it at start; a second registry on the same bucket or dir is
// refused, and an archive object, once written, is never replaced.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { CLAIM_KEY } from '../../src/server/archives/registry-claim.js';
import { createS3ArchiveStorage, s3ClientFromEnv } from '../../src/server/archives/s3-storage.js';
import {
  ArchiveExistsError,
  createLocalArchiveStorage,
  type ArchiveStorage,
} from '../../src/server/archives/storage.js';
import { StartRefusedError } from '../../src/server/start-refusal.js';
import { runInProcess } from '../cli/in-process.js';
import { startServer, tempDir } from '../helpers.js';
import { testS3 } from '../s3.js';
import { createPublisher, createUser, makeZip, publishAndUpload } from '../server/fixtures.js';
import { MemoryBudget, UPLOAD_MEMORY_MAX } from '../../src/server/archives/validate-zip.js';

/** The receive buffers' budget, as a server's. */
const receiveMemory = new MemoryBudget(UPLOAD_MEMORY_MAX);

const s3Server = testS3();

const received = (storage: ArchiveStorage, bytes: Buffer) =>
  storage.receive(Readable.from([bytes]), 1024 * 1024, receiveMemory);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function readAll(storage: ArchiveStorage, key: string): Promise<Buffer | undefined> {
  const opened = await storage.open(key);
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Commits A at a key, then B at the same key: B is refused and A stays; A again is taken (a retry). */
async function expectWrittenOnce(storage: ArchiveStorage) {
  const [a, b] = [randomBytes(2000), randomBytes(3000)];
  const key = 'acme/mynode/1.4.0/node.zip';
  await storage.commit(await received(storage, a), key);
  const other = await received(storage, b);
  const refused = await storage.commit(other, key).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(refused).toBeInstanceOf(ArchiveExistsError);
  expect((refused as ArchiveExistsError).sha256).toBe(sha256(a));
  await storage.discard(other);
  expect((await readAll(storage, key))?.equals(a)).toBe(true);
  await storage.commit(await received(storage, a), key);
  expect((await readAll(storage, key))?.equals(a)).toBe(true);
}

describe('one registry per archive storage', () => {
  it('a second registry on the same archive dir is refused at start, naming the claim; the first keeps serving', async () => {
    const archivesDir = tempDir('nodereg-shared-archives-');
    const first = await startServer({ archives: createLocalArchiveStorage(archivesDir) });
    const alice = await createUser(first, 'alice');
    await createPublisher(first, alice, 'acme');
    const zip = await makeZip({ 'node.py': '# the first registry\n' });
    await publishAndUpload(first, alice.token, 'acme', 'mynode', '1.4.0', {}, zip);
    const claim = JSON.parse(readFileSync(join(archivesDir, CLAIM_KEY), 'utf8')) as { registry: string };
    expect(claim.registry).toBe(await first.server.store.registryId());

    const refused = await startServer({ archives: createLocalArchiveStorage(archivesDir) }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(StartRefusedError);
    expect((refused as Error).message).toContain(join(archivesDir, CLAIM_KEY));
    expect((refused as Error).message).toContain(claim.registry);
    expect(readFileSync(join(archivesDir, 'acme/mynode/1.4.0/node.zip')).equals(zip)).toBe(true);
    const download = await fetch(`${first.url}/archives/acme/mynode/1.4.0/node.zip`);
    expect(Buffer.from(await download.arrayBuffer()).equals(zip)).toBe(true);
    await first.close();

    // The same registry (its database) starts again on it.
    const again = await startServer({ dataDir: first.dataDir, archives: createLocalArchiveStorage(archivesDir) });
    await again.close();
  });

  it('a local archive object is written once', async () => {
    await expectWrittenOnce(createLocalArchiveStorage(tempDir('nodereg-archives-')));
  });

  describe.skipIf(!s3Server)('on S3', () => {
    it('`serve` of a second registry on the bucket exits 3 naming the storage URL and the claim; nothing is overwritten', async () => {
      const s3 = await s3Server!;
      const bucket = await s3.bucket();
      const storage = `s3://${bucket}/registry`;
      const env = (dir: string) => ({ ...s3.env, NODEREG_STORAGE_URL: storage, XDG_DATA_HOME: dir });
      const first = await startServer({
        archives: createS3ArchiveStorage({ bucket, prefix: 'registry', env: s3.env }),
      });
      const alice = await createUser(first, 'alice');
      await createPublisher(first, alice, 'acme');
      const zip = await makeZip({ 'node.py': '# the first registry\n' });
      await publishAndUpload(first, alice.token, 'acme', 'mynode', '1.4.0', {}, zip);

      const second = await runInProcess(['serve', '--port', '0', '--data-dir', tempDir()], { env: env(tempDir()) });
      expect(second.code, second.stderr).toBe(3);
      expect(second.stderr).toContain(`${storage}/${CLAIM_KEY}`);
      expect(second.stderr).toContain(await first.server.store.registryId());
      expect(second.stderr).toContain('--storage');

      const client = s3ClientFromEnv(s3.env);
      const object = await client.send(
        new GetObjectCommand({ Bucket: bucket, Key: 'registry/acme/mynode/1.4.0/node.zip' }),
      );
      expect(Buffer.from(await object.Body!.transformToByteArray()).equals(zip)).toBe(true);
      client.destroy();
      await first.close();
    });

    it('an S3 archive object is written once, its SHA-256 kept beside it', async () => {
      const s3 = await s3Server!;
      const storage = createS3ArchiveStorage({ bucket: await s3.bucket(), prefix: '', env: s3.env });
      await expectWrittenOnce(storage);
      await storage.close?.();
    });
  });
});
