// `nodereg backup` of a registry whose archives are not in DIR/archives (`serve --storage DIR`, or an
// S3 bucket): the backup copies them from where serve recorded them, or refuses with exit 2; it never
// exits 0 for a backup that `restore` would refuse. Every backup written here is restored and served.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAIM_KEY } from '../../src/server/archives/registry-claim.js';
import { createS3ArchiveStorage } from '../../src/server/archives/s3-storage.js';
import { type ArchiveStorage, createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { runInProcess } from '../cli/in-process.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { testS3 } from '../s3.js';
import { call, createPublisher, createUser, makeZip, publishAndUpload } from '../server/fixtures.js';

const s3Server = testS3();
const KEY = join('acme', 'tool', '1.0.0', 'node.zip');

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A running registry on `archives`, with one uploaded version; the archive's bytes. */
async function served(archives: ArchiveStorage): Promise<{ dataDir: string; zip: Buffer }> {
  server = await startServer({ archives });
  const owner = await createUser(server);
  await createPublisher(server, owner, 'acme');
  const zip = await makeZip({ 'node.py': '# tool 1.0.0\n' });
  await publishAndUpload(server, owner.token, 'acme', 'tool', '1.0.0', {}, zip);
  return { dataDir: server.dataDir, zip };
}

const s3Storage = async (prefix = 'archives') => {
  const s3 = (await s3Server)!;
  const bucket = await s3.bucket();
  return { url: `s3://${bucket}/${prefix}`, open: () => createS3ArchiveStorage({ bucket, prefix, env: s3.env }) };
};

/** Restores `backup` into a new SQLite data dir (and `storage`, when given), serves it, and expects `zip` downloaded. */
async function expectRestored(backup: string, zip: Buffer, storage?: Awaited<ReturnType<typeof s3Storage>>) {
  const fresh = tempDir();
  const env = storage ? (await s3Server)!.env : {};
  const restored = await runInProcess(
    ['restore', backup, '--database', join(fresh, 'registry.db'), ...(storage ? ['--storage', storage.url] : [])],
    { env },
  );
  expect(restored.code, restored.stderr).toBe(0);
  const copy = await startServer({ dataDir: fresh, ...(storage && { archives: storage.open() }) });
  try {
    const install = await call(copy.url, 'GET', '/nodes/tool/install');
    expect(install.status, install.text).toBe(200);
    const archive = await fetch(install.body.downloadUrl);
    expect(archive.status).toBe(200);
    expect(Buffer.from(await archive.arrayBuffer()).equals(zip)).toBe(true);
  } finally {
    await copy.close();
  }
}

/** Backs `dataDir` up into a new dir (exit 0 expected); the backup's path. */
async function backup(dataDir: string, args: string[] = [], env: Record<string, string> = {}) {
  const out = join(tempDir(), 'backup');
  const result = await runInProcess(['backup', '--data-dir', dataDir, ...args, out], { env });
  expect(result.code, result.stderr).toBe(0);
  return { out, result };
}

describe('nodereg backup of archives kept elsewhere', () => {
  it('copies them from the dir serve recorded (with no flag, with the same --storage or NODEREG_STORAGE_URL); each backup restores', async () => {
    const storage = tempDir();
    const { dataDir, zip } = await served(createLocalArchiveStorage(storage));
    for (const [args, env] of [
      [[], {}],
      [['--storage', storage], {}],
      [[], { NODEREG_STORAGE_URL: storage }],
    ] as const) {
      const { out, result } = await backup(dataDir, [...args], env);
      expect(readFileSync(join(out, 'archives', KEY))).toEqual(zip);
      expect(result.stdout).toMatch(/archives\/\s+1 file/);
      expect(existsSync(join(out, CLAIM_KEY))).toBe(false);
      await expectRestored(out, zip);
    }
  });

  it('a --storage or NODEREG_STORAGE_URL naming another storage than the recorded one is refused (exit 2, naming both); nothing is left at OUT', async () => {
    const storage = tempDir();
    const { dataDir } = await served(createLocalArchiveStorage(storage));
    for (const [args, env, name] of [
      [['--storage', 's3://registry-archives/prod'], {}, '--storage'],
      [[], { NODEREG_STORAGE_URL: 's3://registry-archives/prod' }, 'NODEREG_STORAGE_URL'],
    ] as const) {
      const out = join(tempDir(), 'out');
      const result = await runInProcess(['backup', '--data-dir', dataDir, ...args, out], { env });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `${name} names s3://registry-archives/prod, but the server of ${dataDir} keeps its archives in ${storage}`,
      );
      expect(existsSync(out)).toBe(false);
    }
  });

  it('archives missing, or not matching their SHA-256, refuse the backup (exit 2); nothing is left at OUT', async () => {
    const storage = tempDir();
    const { dataDir } = await served(createLocalArchiveStorage(storage));
    await server!.close();
    server = undefined;
    writeFileSync(join(storage, KEY), 'not the archive');
    const out = join(tempDir(), 'out');
    const damaged = await runInProcess(['backup', '--data-dir', dataDir, out]);
    expect(damaged.code).toBe(2);
    expect(damaged.stderr).toMatch(/the archive of tool 1\.0\.0 in .* has SHA-256 [0-9a-f]{64}, but its version says/);
    rmSync(join(storage, KEY));
    const missing = await runInProcess(['backup', '--data-dir', dataDir, out]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`1 of 1 archives are not in ${storage} (tool 1.0.0 first)`);
    expect(existsSync(out)).toBe(false);
  });

  it('a data dir without the record (an older serve) backs up DIR/archives, and refuses when they are elsewhere', async () => {
    const { dataDir } = await served(createLocalArchiveStorage(tempDir()));
    rmSync(join(dataDir, 'storage.json'));
    const out = join(tempDir(), 'out');
    const result = await runInProcess(['backup', '--data-dir', dataDir, out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`1 of 1 archives are not in ${join(dataDir, 'archives')}`);
    expect(result.stderr).toMatch(/hint: .*--storage/);
  });

  it('a storage record nodereg did not write is refused (exit 2); the hint names the data dir shell-quoted', async () => {
    const dataDir = join(tempDir(), "Ada's data; x");
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'storage.json'), '{}');
    const result = await runInProcess(['backup', '--data-dir', dataDir, join(tempDir(), 'out')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`\`nodereg serve --data-dir '${dataDir.replace("'", "'\\''")}'\``);
  });

  it("a storage whose claim names another registry is refused (exit 2): its archives are not this registry's", async () => {
    const storage = tempDir();
    const { dataDir } = await served(createLocalArchiveStorage(storage));
    await server!.close();
    server = undefined;
    writeFileSync(join(storage, CLAIM_KEY), `${JSON.stringify({ registry: 'another-registry' })}\n`);
    const result = await runInProcess(['backup', '--data-dir', dataDir, join(tempDir(), 'out')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('belongs to another registry (its claim names another-registry)');
  });
});

describe.skipIf(!s3Server)('nodereg backup of archives in S3 (s3rver)', () => {
  it('copies them out of the bucket serve recorded, even with no S3 flag; the backup restores into a dir and into S3', async () => {
    const source = await s3Storage();
    const { dataDir, zip } = await served(source.open());
    const { out, result } = await backup(dataDir, [], (await s3Server)!.env);
    expect(readFileSync(join(out, 'archives', KEY))).toEqual(zip);
    expect(result.stdout).toContain(`from ${source.url}`);
    await expectRestored(out, zip); // S3 → local
    await expectRestored(out, zip, await s3Storage('restored')); // S3 → S3
  });

  it('a local registry backs up and restores into S3 (mixed)', async () => {
    const { dataDir, zip } = await served(createLocalArchiveStorage(tempDir()));
    const { out } = await backup(dataDir);
    await expectRestored(out, zip, await s3Storage('restored'));
  });
});
