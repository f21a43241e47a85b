// `nodereg backup` of a registry whose archives are not in DIR/archives (`serve --storage DIR`, or
// NODEREG_STORAGE_URL): the backup copies them from there, and never calls itself whole without them.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { createPublisher, createUser, publishAndUpload } from '../server/fixtures.js';
import { runInProcess } from '../cli/in-process.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A running registry with its archives in a dir of their own, and one uploaded version. */
async function servedWithStorage(): Promise<{ dataDir: string; storage: string }> {
  const storage = tempDir();
  server = await startServer({ archives: createLocalArchiveStorage(storage) });
  const owner = await createUser(server);
  await createPublisher(server, owner, 'acme');
  await publishAndUpload(server, owner.token, 'acme', 'tool', '1.0.0');
  return { dataDir: server.dataDir, storage };
}

describe('nodereg backup with --storage', () => {
  it('copies the archives from --storage DIR (or NODEREG_STORAGE_URL) into OUT/archives', async () => {
    const { dataDir, storage } = await servedWithStorage();
    const key = join('acme', 'tool', '1.0.0', 'node.zip');
    for (const [name, args, env] of [
      ['flag', ['--storage', storage], {}],
      ['env', [], { NODEREG_STORAGE_URL: storage }],
    ] as const) {
      const out = join(tempDir(), name);
      const result = await runInProcess(['backup', '--data-dir', dataDir, ...args, out], { env });
      expect(result.code, result.stderr).toBe(0);
      expect(readFileSync(join(out, 'archives', key))).toEqual(readFileSync(join(storage, key)));
      expect(result.stdout).toMatch(/archives\/\s+1 file/);
    }
  });

  it('without --storage, archives missing from DIR/archives fail the backup (exit 1, naming --storage); nothing is left at OUT', async () => {
    const { dataDir } = await servedWithStorage();
    const out = join(tempDir(), 'out');
    const result = await runInProcess(['backup', '--data-dir', dataDir, out]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`1 of 1 archives are not in ${join(dataDir, 'archives')} (tool 1.0.0 first)`);
    expect(result.stderr).toMatch(/hint: .*--storage/);
    expect(existsSync(out)).toBe(false);
  });

  it('with s3:// storage, copies the database and secrets and says the archives stay in the bucket', async () => {
    server = await startServer();
    const out = join(tempDir(), 'out');
    const result = await runInProcess([
      'backup',
      '--data-dir',
      server.dataDir,
      '--storage',
      's3://registry-archives/prod',
      out,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('archives/    not copied: they stay in s3://registry-archives/prod');
    expect(result.stdout).toContain(`serve with --data-dir ${out} --storage s3://registry-archives/prod`);
  });
});
