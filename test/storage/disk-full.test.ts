// A registry whose disk is full: SQLite's own SQLITE_FULL (max_page_count reached, as on a full disk)
// and a file write refused with ENOSPC are 503s that say so, with a warn line naming what to free,
// never a 500 with a stack trace; nothing is stored, and the write works once there is room. So is a
// write the file system does not allow (EACCES: a dir whose permissions changed, a read-only mount).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalArchiveStorage, type ArchiveStorage } from '../../src/server/archives/storage.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { call, createPublisher, createUser, makeZip, publish, uploadTo } from '../server/fixtures.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const logged: { line: string; level?: string }[] = [];
const log = (line: string, level?: string) => void logged.push({ line, level });

describe('a full disk', () => {
  it('SQLITE_FULL: a write is a 503 saying the disk is full, a warn line names the database; reads go on, and writes work once there is room', async () => {
    logged.length = 0;
    server = await startServer({ log, accessLog: false });
    const owner = await createUser(server);
    const db = server.server.db!;
    db.exec('CREATE TABLE filler (x BLOB)');
    db.pragma(`max_page_count = ${(db.pragma('page_count', { simple: true }) as number) + 8}`);
    // Fill the last pages, as a full disk would leave them.
    for (const size of [4000, 400, 40, 1]) {
      try {
        for (;;) db.prepare('INSERT INTO filler VALUES (randomblob(?))').run(size);
      } catch (error) {
        expect((error as { code?: string }).code).toBe('SQLITE_FULL');
      }
    }

    // The pages in use still have room for a few rows: publishers go in until one needs a new page.
    let refused;
    for (let n = 0; n < 200; n++) {
      refused = await call(server.url, 'POST', '/publishers', {
        token: owner.token,
        body: { id: `full-${n}`, name: 'Full', description: 'x'.repeat(1000) },
      });
      if (refused.status !== 201) break;
    }
    refused = refused!;
    expect(refused.status, refused.text).toBe(503);
    expect(refused.body.error).toBe('unavailable');
    expect(refused.body.message).toMatch(/out of disk space; nothing was stored/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(30);
    expect(logged).toContainEqual({
      level: 'warn',
      line: expect.stringMatching(
        new RegExp(
          `^out of disk space \\(SQLITE_FULL\\) writing the database ${join(server.dataDir, 'registry.db')}; free space there: answered 503$`,
        ),
      ),
    });
    expect(logged.some((entry) => entry.level === 'error')).toBe(false);
    expect((await call(server.url, 'GET', '/readyz')).status).toBe(200);

    db.exec('DROP TABLE filler');
    db.pragma('max_page_count = 1073741823');
    await createPublisher(server, owner, 'acme');
  });

  it('ENOSPC while an upload is written: a 503, the version stays pending and the upload can be sent again', async () => {
    const enospc = () =>
      Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
        errno: -28,
        syscall: 'write',
      });
    // The disk refuses the upload's temporary file (Node's own error for it).
    await refusedUpload(
      (local, dir) => ({
        receive: (...args: Parameters<typeof local.receive>) =>
          refusing ? Promise.reject(enospc()) : local.receive(...args),
        dir,
      }),
      /out of disk space/,
      (dir) => `out of disk space (ENOSPC) writing archives ${dir}; free space there: answered 503`,
    );
  });

  it('EACCES putting an archive in place: a 503 naming the path and what to fix; the upload can be sent again', async () => {
    const eacces = (path: string) =>
      Object.assign(new Error(`EACCES: permission denied, mkdir '${path}'`), {
        code: 'EACCES',
        errno: -13,
        syscall: 'mkdir',
        path,
      });
    await refusedUpload(
      (local, dir) => ({
        commit: (...args: Parameters<typeof local.commit>) =>
          refusing ? Promise.reject(eacces(join(dir, 'acme'))) : local.commit(...args),
      }),
      /may not write its data/,
      (dir) =>
        `not allowed to write (EACCES) writing archives ${join(dir, 'acme')}; let the user serve runs as write there (its permissions, a read-only mount): answered 503`,
    );
  });
});

let refusing = true;

/**
 * An upload to archive storage whose disk refuses it while `refusing` (the methods `faulty` replaces):
 * 503 with `message`, the warn line `line`, no error line; then, with the disk fine, the same upload works.
 */
async function refusedUpload(
  faulty: (local: ArchiveStorage, dir: string) => Partial<ArchiveStorage> & { dir?: string },
  message: RegExp,
  line: (dir: string) => string,
): Promise<void> {
  logged.length = 0;
  refusing = true;
  const dir = tempDir();
  const local = createLocalArchiveStorage(dir);
  const { dir: named, ...methods } = faulty(local, dir);
  server = await startServer({
    log,
    accessLog: false,
    archives: { ...local, ...methods },
    backendUrls: { storage: named },
  });
  const owner = await createUser(server);
  await createPublisher(server, owner, 'acme');
  const published = await publish(server, owner.token, 'acme', 'tool', '1.0.0');
  const zip = await makeZip();
  const refused = await uploadTo(published.body.signedUrl, zip);
  expect(refused.status, refused.text).toBe(503);
  expect(refused.body.message).toMatch(message);
  expect(logged).toContainEqual({ level: 'warn', line: line(dir) });
  expect(logged.some((entry) => entry.level === 'error')).toBe(false);

  refusing = false;
  expect((await uploadTo(published.body.signedUrl, zip)).status).toBe(200);
}
