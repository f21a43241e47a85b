import Database from 'better-sqlite3';
import { privateDatabaseFile } from '../data-dir.js';
import { migrations } from './migrations.js';
import { count, optionalText, text, type Row } from './rows.js';
import { searchWords, UNFILLED_WORDS } from './search-words.js';
import { UNFILLED_VERSION_ORDER, versionOrder } from './version-order.js';

export type Db = Database.Database;

/**
 * Opens the registry database (0600, its -wal and -shm too): WAL, foreign keys on, and every pending
 * migration applied in order; `log` hears of an upgrade (an operator cannot go back without a backup).
 */
export function openDatabase(file: string, log?: (line: string) => void): Db {
  privateDatabaseFile(file);
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 5000');
    walMode(db);
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    const from = migrate(db);
    // 0 is a new file, not an upgrade.
    if (from > 0 && from < migrations.length) {
      log?.(
        `upgraded the database ${file} from schema ${from} to ${migrations.length}: an older nodereg refuses it from now on (keep a backup to go back)`,
      );
    }
    fillVersionOrder(db);
    fillSearchWords(db);
  } catch (error) {
    db.close();
    throw damaged(file, error);
  }
  return db;
}

/** A file SQLite cannot read as a database (truncated, overwritten) named, with what to do; other errors as they are. */
function damaged(file: string, error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (code !== 'SQLITE_CORRUPT' && code !== 'SQLITE_NOTADB') return error;
  return new Error(
    `${file} is damaged (${(error as Error).message}): it may have been truncated or overwritten; put a whole copy back (from a backup: nodereg backup's OUT/registry.db) and start again`,
  );
}

/**
 * Sets WAL. SQLite answers SQLITE_BUSY at once, without the busy timeout, while a serve opening the same
 * new file meanwhile sets it (two serves starting together on a new file, now and then): tried again
 * for up to 5 s.
 */
function walMode(db: Db): void {
  for (let tries = 1; ; tries++) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || tries === 100) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50); // a synchronous pause: opening is synchronous
    }
  }
}

/** Applies the pending migrations; returns the schema found. */
function migrate(db: Db): number {
  const found = db.pragma('user_version', { simple: true }) as number;
  // A newer nodereg's schema: this build would write rows without what its migrations added. Refused, untouched.
  if (found > migrations.length) {
    throw new Error(
      `${db.name} was written by a newer nodereg (schema ${found}, this one knows ${migrations.length}): serve it with that nodereg or a later one`,
    );
  }
  // Up to date, the common start: no write lock taken.
  if (found === migrations.length) return found;
  // Migration 'search-words' fills the new column with the store's own rule, before the indexes are made.
  db.function('search_words', { deterministic: true }, (id, name) =>
    searchWords(String(id), name === null ? null : String(name)),
  );
  for (const [index, migration] of migrations.entries()) {
    const version = index + 1;
    // The version is read under the write lock: a serve opening the same new database meanwhile may have applied it.
    db.transaction(() => {
      if ((db.pragma('user_version', { simple: true }) as number) >= version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${version}`);
    }).immediate();
  }
  return found;
}

const rows = (db: Db, sql: string) =>
  db
    .prepare(sql)
    .all()
    .filter((row): row is Row => typeof row === 'object' && row !== null);

/** Versions stored before the column version_order (or by an older nodereg on this file) get theirs. */
function fillVersionOrder(db: Db): void {
  const missing = rows(db, UNFILLED_VERSION_ORDER).map((row) => ({
    id: text(row, 'id'),
    version: text(row, 'version'),
  }));
  if (!missing.length) return;
  const set = db.prepare('UPDATE versions SET version_order = ? WHERE id = ?');
  db.transaction(() => missing.forEach((row) => set.run(versionOrder(row.version), row.id)))();
}

/** Nodes stored before the column words (or by an older nodereg on this file) get theirs, and are indexed with them. */
function fillSearchWords(db: Db): void {
  const missing = rows(db, UNFILLED_WORDS).map((row) => ({
    seq: count(row, 'seq'),
    id: text(row, 'id'),
    name: optionalText(row, 'name'),
  }));
  if (missing.length === 0) return;
  const set = db.prepare('UPDATE nodes SET words = ? WHERE seq = ?');
  db.transaction(() => missing.forEach((row) => set.run(searchWords(row.id, row.name), row.seq)))();
}
