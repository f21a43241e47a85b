// A registry.db emptied, deleted or truncated beside the archives, admin token or storage record of the
// registry that ran there: serve refuses to start (exit 1), naming the file, instead of serving an
// empty registry over orphaned archives. A new data dir, and one a concurrent first start is making, still start.
import { copyFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { startServer, tempDir } from '../helpers.js';
import { createPublisher, createUser, publishAndUpload } from '../server/fixtures.js';

/** A data dir a registry ran in, with archives, then stopped; its registry.db. */
async function ranRegistry(versions = 1): Promise<{ dataDir: string; file: string }> {
  const server = await startServer();
  const owner = await createUser(server);
  await createPublisher(server, owner, 'acme');
  for (let i = 0; i < versions; i++) await publishAndUpload(server, owner.token, 'acme', 'tool', `1.0.${i}`);
  await server.close();
  return { dataDir: server.dataDir, file: join(server.dataDir, 'registry.db') };
}

const startError = (dataDir: string) =>
  startServer({ dataDir }).then(
    async (server) => {
      await server.close();
      return undefined;
    },
    (error: unknown) => (error as Error).message,
  );

describe('a registry.db lost beside its registry', () => {
  it('truncated to 0 bytes, or deleted: the start is refused, naming the file and what is beside it', async () => {
    const { dataDir, file } = await ranRegistry();
    truncateSync(file, 0);
    expect(await startError(dataDir)).toMatch(
      new RegExp(
        `^${file} is empty \\(0 bytes\\), but a registry ran in ${dataDir} \\(.*archives.*\\): started, it would serve an empty registry`,
      ),
    );
    expect(statSync(file).size).toBe(0); // nothing was written into it
    rmSync(file);
    for (const name of ['registry.db-wal', 'registry.db-shm']) rmSync(join(dataDir, name), { force: true });
    expect(await startError(dataDir)).toMatch(new RegExp(`^${file} is missing, but a registry ran in ${dataDir}`));
  });

  it('`nodereg serve` on it exits 1 naming the file', async () => {
    const { dataDir, file } = await ranRegistry();
    truncateSync(file, 0);
    const result = await runInProcess(['serve', '--port', '0', '--data-dir', dataDir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${file} is empty (0 bytes)`);
  });

  it('truncated midway: refused as damaged, naming the file', async () => {
    const { dataDir, file } = await ranRegistry(30);
    truncateSync(file, Math.floor(statSync(file).size / 2 / 4096) * 4096);
    expect(await startError(dataDir)).toMatch(new RegExp(`^${file} is damaged \\(.*\\): it may have been truncated`));
  });

  it('a new data dir with only its secret (a concurrent first start writes it first) starts', async () => {
    const { dataDir } = await ranRegistry();
    const fresh = tempDir();
    copyFileSync(join(dataDir, 'secret'), join(fresh, 'secret'));
    expect(await startError(fresh)).toBeUndefined();
  });
});
