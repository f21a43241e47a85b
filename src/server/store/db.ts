import Database from 'better-sqlite3';
import { privateDatabaseFile } from '../data-dir.js';
import { migrations } from './migrations.js';
import { versionOrder } from './version-order.js';

export type Db = Database.Database;

/** Opens the registry database (0600, its -wal and -shm too): WAL, foreign keys on, and every pending migration applied in order. */
export function openDatabase(file: string): Db {
  privateDatabaseFile(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  migrate(db);
  fillVersionOrder(db);
  return db;
}

function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (const [index, migration] of migrations.entries()) {
    const version = index + 1;
    if (version <= current) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${version}`);
    })();
  }
}

/** Versions stored before the column version_order (or by an older nodereg on this file) get theirs. */
function fillVersionOrder(db: Db): void {
  const missing = db.prepare('SELECT id, version FROM versions WHERE version_order IS NULL').all() as { id: string; version: string }[];
  if (!missing.length) return;
  const set = db.prepare('UPDATE versions SET version_order = ? WHERE id = ?');
  db.transaction(() => missing.forEach((row) => set.run(versionOrder(row.version), row.id)))();
}
