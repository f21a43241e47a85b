// Storage lifecycle (issue [operate]): `nodereg admin gc` removes the archives of versions deleted
// longer than the grace period and objects at an archive key no version refers to, older than it;
// `--dry-run` lists them and removes nothing. Never a live version's archive, an upload's claimed key
// (in flight), or an object outside the archive keys (the claim, the proxy's results, the mirror).
import { randomBytes } from 'node:crypto';
import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createS3ArchiveStorage } from '../../src/server/archives/s3-storage.js';
import { type ArchiveStorage, createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { archiveKey } from '../../src/server/views.js';
import { runInProcess } from '../cli/in-process.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { testS3 } from '../s3.js';
import { call, createPublisher, createUser, publish, publishAndUpload } from '../server/fixtures.js';
import { MemoryBudget, UPLOAD_MEMORY_MAX } from '../../src/server/archives/validate-zip.js';

/** The receive buffers' budget, as a server's. */
const receiveMemory = new MemoryBudget(UPLOAD_MEMORY_MAX);

const s3Server = testS3();
const DAY = 24 * 3600 * 1000;
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Stores `bytes` at `key`, as an upload's put does. */
async function put(archives: ArchiveStorage, key: string, bytes = randomBytes(300)) {
  await archives.commit(await archives.receive(Readable.from([bytes]), 10_000, receiveMemory), key);
}

/**
 * A registry with a live version, a version deleted now, a version whose upload holds its claim with
 * its bytes stored, an object no version refers to, and a proxy result; `age(key)` makes a local
 * object's file older than the grace period (a bucket's objects cannot be aged: those tests use --grace 0s).
 */
async function registry(archives: ArchiveStorage) {
  server = await startServer({ archives });
  const alice = await createUser(server);
  const publisher = `gc-${randomBytes(3).toString('hex')}`;
  await createPublisher(server, alice, publisher);
  await publishAndUpload(server, alice.token, publisher, 'gc-node', '1.0.0');
  await publishAndUpload(server, alice.token, publisher, 'gc-node', '1.1.0');
  const withdrawn = await call(server.url, 'PUT', `/publishers/${publisher}/nodes/gc-node/versions/1.0.0`, {
    token: alice.token,
    body: { status: 'NodeVersionStatusDeleted' },
  });
  expect(withdrawn.status, withdrawn.text).toBe(200);
  const pending = await publish(server, alice.token, publisher, 'gc-node', '2.0.0');
  const inFlight = archiveKey(publisher, 'gc-node', '2.0.0');
  expect(await server.server.store.claimArchive(pending.body.node_version.id, inFlight)).toBe(true);
  await put(archives, inFlight);
  const orphan = archiveKey(publisher, 'ghost', '0.1.0');
  await put(archives, orphan);
  await archives.write('_proxy-results/old.png', randomBytes(10), 'image/png');
  // A mirror's kept node (never taken) and a scratch copy a crash left mid-answer (taken past the grace).
  await archives.write('_mirror/nodes/kept.json', Buffer.from('{}'), 'application/json');
  const scratch = `_mirror/scratch/${randomBytes(8).toString('hex')}.zip`;
  await put(archives, scratch);
  const keys = {
    live: archiveKey(publisher, 'gc-node', '1.1.0'),
    deleted: archiveKey(publisher, 'gc-node', '1.0.0'),
    inFlight,
    orphan,
    proxy: '_proxy-results/old.png',
    mirrorEntry: '_mirror/nodes/kept.json',
    scratch,
  };
  return { alice, publisher, keys };
}

const gc = (token: string, ...args: string[]) =>
  runInProcess(['--registry', server!.url, '--token', token, 'admin', 'gc', ...args]);

async function present(archives: ArchiveStorage, keys: Record<string, string>) {
  const found: Record<string, boolean> = {};
  for (const [name, key] of Object.entries(keys)) found[name] = await archives.exists(key);
  return found;
}

describe('nodereg admin gc on a local archive dir', () => {
  it('keeps what is younger than the grace, collects the deleted version and the orphan past it, and never a claimed key', async () => {
    const dir = tempDir('nodereg-archives-');
    const archives = createLocalArchiveStorage(dir);
    const { alice, publisher, keys } = await registry(archives);
    const db = server!.server.db!;
    const deletedAt = db
      .prepare("SELECT status_changed_at FROM versions WHERE version = '1.0.0' AND node_id = 'gc-node'")
      .get() as { status_changed_at: string | null };
    expect(Date.now() - Date.parse(deletedAt.status_changed_at!)).toBeLessThan(DAY);

    const young = await gc(server!.adminToken, '--json');
    expect(young.code, young.stderr).toBe(0);
    expect(JSON.parse(young.stdout)).toMatchObject({ dry_run: false, deleted_versions: [], orphans: [] });
    expect(await present(archives, keys)).toEqual({
      live: true,
      deleted: true,
      inFlight: true,
      orphan: true,
      proxy: true,
      mirrorEntry: true,
      scratch: true,
    });

    // eight days on: the deletion and every object's file older than the 7-day grace
    const old = new Date(Date.now() - 8 * DAY);
    db.prepare("UPDATE versions SET status_changed_at = ? WHERE status = 'NodeVersionStatusDeleted'").run(
      old.toISOString(),
    );
    for (const key of Object.values(keys)) utimesSync(join(dir, ...key.split('/')), old, old);

    const notAdmin = await gc(alice.token, '--dry-run');
    expect(notAdmin.code).toBe(4);
    expect(notAdmin.stderr).toContain('admin token');

    const dry = await gc(server!.adminToken, '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    const listed = JSON.parse(dry.stdout);
    expect(listed.dry_run).toBe(true);
    expect(listed.deleted_versions).toEqual([{ node_id: 'gc-node', version: '1.0.0', key: keys.deleted }]);
    expect(listed.orphans.map((o: { key: string }) => o.key).sort()).toEqual([keys.orphan, keys.scratch].sort());
    expect(await present(archives, keys)).toEqual({
      live: true,
      deleted: true,
      inFlight: true,
      orphan: true,
      proxy: true,
      mirrorEntry: true,
      scratch: true,
    });

    const done = await gc(server!.adminToken);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain(`removed ${keys.deleted}`);
    expect(done.stdout).toContain("removed 1 deleted versions' archives and 2 orphaned objects");
    expect(await present(archives, keys)).toEqual({
      live: true,
      deleted: false,
      inFlight: true,
      orphan: false,
      proxy: true,
      mirrorEntry: true,
      scratch: false,
    });
    // the deleted version no longer names an archive; the live one still downloads
    const row = db.prepare("SELECT archive_sha256 FROM versions WHERE version = '1.0.0' AND node_id = 'gc-node'").get();
    expect(row).toEqual({ archive_sha256: null });
    expect((await fetch(`${server!.url}/archives/${publisher}/gc-node/1.1.0/node.zip`)).status).toBe(200);
    const again = await gc(server!.adminToken, '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ deleted_versions: [], orphans: [] });
  });

  it('refuses a --grace that is no duration or longer than any date goes back, naming the flag (exit 2), and the route such a grace (400)', async () => {
    server = await startServer();
    const refused = await gc(server.adminToken, '--grace', 'a week');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--grace');
    const tooLong = await gc(server.adminToken, '--grace', '99999999d');
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toContain('--grace 99999999d is longer than gc takes');
    // Past the CLI, the route refuses such a grace with a 400 naming the field: no date is that far back.
    for (const grace_seconds of [4e9, 1e300]) {
      const answer = await call(server.url, 'POST', '/admin/gc', {
        token: server.adminToken,
        body: { grace_seconds, dry_run: true },
      });
      expect(answer.status, answer.text).toBe(400);
      expect(answer.text).toContain('grace_seconds');
    }
  });
});

describe.skipIf(!s3Server)('nodereg admin gc on an S3 bucket', () => {
  it('lists the deleted version and the orphan under the prefix, removes them, and leaves the rest', async () => {
    const s3 = await s3Server!;
    const archives = createS3ArchiveStorage({ bucket: await s3.bucket(), prefix: 'registry/archives', env: s3.env });
    const { keys } = await registry(archives);
    const db = server!.server.db!;
    db.prepare("UPDATE versions SET status_changed_at = ? WHERE status = 'NodeVersionStatusDeleted'").run(
      new Date(Date.now() - 8 * DAY).toISOString(),
    );
    const young = await gc(server!.adminToken, '--json');
    expect(JSON.parse(young.stdout)).toMatchObject({
      deleted_versions: [{ key: keys.deleted }],
      orphans: [],
    });
    expect(await present(archives, keys)).toEqual({
      live: true,
      deleted: false,
      inFlight: true,
      orphan: true,
      proxy: true,
      mirrorEntry: true,
      scratch: true,
    });

    const dry = await gc(server!.adminToken, '--dry-run', '--grace', '0s', '--json');
    const orphans = [keys.orphan, keys.scratch].sort();
    expect(
      JSON.parse(dry.stdout)
        .orphans.map((o: { key: string }) => o.key)
        .sort(),
    ).toEqual(orphans);
    expect(await archives.exists(keys.orphan)).toBe(true);
    const done = await gc(server!.adminToken, '--grace', '0s', '--json');
    expect(done.code, done.stderr).toBe(0);
    expect(
      JSON.parse(done.stdout)
        .orphans.map((o: { key: string }) => o.key)
        .sort(),
    ).toEqual(orphans);
    expect(await present(archives, keys)).toEqual({
      live: true,
      deleted: false,
      inFlight: true,
      orphan: false,
      proxy: true,
      mirrorEntry: true,
      scratch: false,
    });
  });
});
