// `nodereg backup` stopped by SIGTERM (a cron job's timeout) or Ctrl-C while it copies the database:
// the copy stops there (it went in one step, so the signal was read only once the whole database was
// copied), the partial copy beside OUT is removed, and it exits 143 (or 130). The steps share one read
// transaction, so a writer between them does not make SQLite start the copy again.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openDatabase } from '../../src/server/store/db.js';
import { runInProcess } from '../cli/in-process.js';
import { INSTALLED_BIN, cliEnv, tempDir } from '../helpers.js';
import { checkHints } from '../cli/hint-check.js';

/** The partial copy's database, once the copy into it has begun. */
function copyStarted(parent: string): boolean {
  const partial = readdirSync(parent).find((name) => name.includes('.partial-'));
  const copy = partial && join(parent, partial, 'registry.db');
  return Boolean(copy && existsSync(copy) && statSync(copy).size > 0);
}

/**
 * A data dir whose database holds `rows` blobs of `size` bytes, with its secret; the database is left
 * open (to write more) or closed.
 */
function ballastedDataDir(rows: number, size: number): { dataDir: string; dbPath: string; db: Database.Database } {
  const dataDir = tempDir();
  const dbPath = join(dataDir, 'registry.db');
  openDatabase(dbPath).close();
  const db = new Database(dbPath);
  db.exec('CREATE TABLE ballast (x BLOB)');
  const insert = db.prepare(`INSERT INTO ballast VALUES (randomblob(${size}))`);
  db.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run();
  })();
  writeFileSync(join(dataDir, 'secret'), `${'ab'.repeat(32)}\n`, { mode: 0o600 });
  return { dataDir, dbPath, db };
}

it('SIGTERM or SIGINT during the database copy stops it, removes the partial copy and exits 143 or 130', async () => {
  // Big enough (~150 MB) that the copy is still going when the signal comes.
  const { dataDir, dbPath, db } = ballastedDataDir(1500, 100_000);
  db.close();

  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    const parent = tempDir();
    const out = join(parent, 'backup');
    const child = spawn(process.execPath, [INSTALLED_BIN, 'backup', '--data-dir', dataDir, out], {
      env: cliEnv(tempDir()),
      stdio: 'pipe',
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', (exitCode) => resolve(exitCode)));
    while (!copyStarted(parent)) {
      expect(child.exitCode, stderr).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill(signal);
    expect(await exited, stderr).toBe(code);
    await checkHints('', stderr);
    expect(stderr).toMatch(
      new RegExp(
        `interrupted during the copy of ${dbPath} \\(\\d+ of \\d+ pages\\): no backup was made, and the partial copy is removed`,
      ),
    );
    expect(readdirSync(parent)).toEqual([]);
  }
}, 120_000);

it('a copy in steps is not started again by a writer between two of them: it is the snapshot of its start', async () => {
  const { dataDir, db: writer } = ballastedDataDir(3000, 10_000); // ~30 MB: several steps of 4 MiB
  const insert = writer.prepare('INSERT INTO ballast VALUES (randomblob(10000))');

  // A row between every two steps (the copy's steps and these writes share this event loop), until the
  // backup ends; without one read transaction across the steps, each write made SQLite start it again.
  let writes = 0;
  let backingUp = true;
  const guard = setTimeout(() => (backingUp = false), 60_000); // ends a copy that never finishes, to fail below, not hang
  const write = () => {
    if (!backingUp) return;
    insert.run();
    writes++;
    setImmediate(write);
  };
  setImmediate(write);
  const out = join(tempDir(), 'backup');
  const result = await runInProcess(['backup', '--data-dir', dataDir, out]);
  const stopped = !backingUp;
  backingUp = false;
  clearTimeout(guard);
  expect(stopped, 'the writer outlasted the copy').toBe(false);
  expect(result.code, result.stderr).toBe(0);
  expect(writes).toBeGreaterThan(3);
  const copy = new Database(join(out, 'registry.db'), { readonly: true });
  expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
  expect((copy.prepare('SELECT count(*) AS n FROM ballast').get() as { n: number }).n).toBeLessThan(3000 + writes);
  copy.close();
  writer.close();
}, 120_000);
