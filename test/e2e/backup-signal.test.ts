// `nodereg backup` stopped by SIGTERM (a cron job's timeout) or Ctrl-C: the partial copy beside OUT is
// removed and it exits 143 (or 130); it was left behind, as large as the database, at every stop.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openDatabase } from '../../src/server/store/db.js';
import { INSTALLED_BIN, cliEnv, tempDir } from '../helpers.js';

it('SIGTERM during a backup removes its partial copy and exits 143 (or finishes a whole one)', async () => {
  const dataDir = tempDir();
  openDatabase(join(dataDir, 'registry.db')).close();
  // Big enough that the copy is still going when the signal comes.
  const db = new Database(join(dataDir, 'registry.db'));
  db.exec('CREATE TABLE ballast (x BLOB)');
  const insert = db.prepare('INSERT INTO ballast VALUES (randomblob(100000))');
  db.transaction(() => {
    for (let i = 0; i < 1000; i++) insert.run();
  })();
  db.close();
  const { writeFileSync } = await import('node:fs');
  writeFileSync(join(dataDir, 'secret'), `${'ab'.repeat(32)}\n`, { mode: 0o600 });

  const parent = tempDir();
  const out = join(parent, 'backup');
  const child = spawn(process.execPath, [INSTALLED_BIN, 'backup', '--data-dir', dataDir, out], { env: cliEnv(tempDir()), stdio: 'pipe' });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // The partial copy is made first; the signal comes once it is there.
  while (!readdirSync(parent).some((name) => name.includes('.partial-'))) {
    expect(child.exitCode).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  child.kill('SIGTERM');
  const code = await exited;
  expect(readdirSync(parent).filter((name) => name.includes('.partial-'))).toEqual([]);
  if (code === 143) expect(existsSync(out)).toBe(false);
  else expect(code).toBe(0); // the copy was done before the signal was read: a whole backup
}, 60_000);
