// `nodereg backup` stopped by SIGTERM (a cron job's timeout) or Ctrl-C while it copies the database:
// the copy stops there (it went in one step, so the signal was read only once the whole database was
// copied), the partial copy beside OUT is removed, and it exits 143 (or 130).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openDatabase } from '../../src/server/store/db.js';
import { INSTALLED_BIN, cliEnv, tempDir } from '../helpers.js';

/** The partial copy's database, once the copy into it has begun. */
function copyStarted(parent: string): boolean {
  const partial = readdirSync(parent).find((name) => name.includes('.partial-'));
  const copy = partial && join(parent, partial, 'registry.db');
  return Boolean(copy && existsSync(copy) && statSync(copy).size > 0);
}

it('SIGTERM or SIGINT during the database copy stops it, removes the partial copy and exits 143 or 130', async () => {
  const dataDir = tempDir();
  const dbPath = join(dataDir, 'registry.db');
  openDatabase(dbPath).close();
  // Big enough (~150 MB) that the copy is still going when the signal comes.
  const db = new Database(dbPath);
  db.exec('CREATE TABLE ballast (x BLOB)');
  const insert = db.prepare('INSERT INTO ballast VALUES (randomblob(100000))');
  db.transaction(() => {
    for (let i = 0; i < 1500; i++) insert.run();
  })();
  db.close();
  writeFileSync(join(dataDir, 'secret'), `${'ab'.repeat(32)}\n`, { mode: 0o600 });

  for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
    const parent = tempDir();
    const out = join(parent, 'backup');
    const child = spawn(process.execPath, [INSTALLED_BIN, 'backup', '--data-dir', dataDir, out], { env: cliEnv(tempDir()), stdio: 'pipe' });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', (exitCode) => resolve(exitCode)));
    while (!copyStarted(parent)) {
      expect(child.exitCode, stderr).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill(signal);
    expect(await exited, stderr).toBe(code);
    expect(stderr).toMatch(new RegExp(`interrupted during the copy of ${dbPath} \\(\\d+ of \\d+ pages\\): no backup was made, and the partial copy is removed`));
    expect(readdirSync(parent)).toEqual([]);
  }
}, 120_000);
