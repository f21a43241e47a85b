// The data dir holds the database, the secret and every archive: only its owner may read it. A
// backup is a data dir too; one cut short must never be served as if it were whole.
import {
  chmodSync,
  closeSync,
  existsSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { makeDirs } from '../shared/make-dirs.js';
import { archiveKey } from './views.js';

/** Written into a backup while it is being made; `nodereg backup` removes it once the copy is whole. */
export const BACKUP_IN_PROGRESS = 'BACKUP-IN-PROGRESS';
/** Written last into a whole backup: what it holds and when it was taken. */
export const BACKUP_COMPLETE = 'backup.json';

/**
 * Written by serve at each start: the registry's id and where its archives are. `nodereg backup` reads
 * it, so the archives are copied from where the server keeps them, not from where an exported variable says.
 */
export const STORAGE_RECORD = 'storage.json';

export interface StorageRecord {
  registry: string;
  /** As --storage names it: an absolute dir, or s3://bucket/prefix. */
  archives: string;
}

/** Writes the data dir's storage record whole (beside it, then renamed), 0600. */
export function recordStorage(dataDir: string, record: StorageRecord): void {
  const file = join(dataDir, STORAGE_RECORD);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ ...record, recorded_at: new Date().toISOString() })}\n`, { mode: 0o600 });
  renameSync(temp, file);
}

/** The data dir's storage record; undefined when serve never wrote one (a data dir of an older version). */
export function readStorageRecord(dataDir: string): StorageRecord | undefined {
  const file = join(dataDir, STORAGE_RECORD);
  if (!existsSync(file)) return undefined;
  const record = JSON.parse(readFileSync(file, 'utf8')) as Partial<StorageRecord>;
  if (typeof record.registry !== 'string' || typeof record.archives !== 'string')
    throw new Error(`${file} is not a storage record nodereg wrote`);
  return { registry: record.registry, archives: record.archives };
}

export interface ArchivedVersion {
  publisher_id: string;
  node_id: string;
  version: string;
  archive_sha256: string;
  archive_size: number | null;
}

/** Each version of a data dir's database that has an archive, one row at a time, in the order they were written. */
export function archivedVersions(db: Database.Database): { count: number; rows: IterableIterator<ArchivedVersion> } {
  const count = (
    db.prepare('SELECT count(*) AS n FROM versions WHERE archive_sha256 IS NOT NULL').get() as { n: number }
  ).n;
  const rows = db
    .prepare(
      `SELECT n.publisher_id, n.id AS node_id, v.version, v.archive_sha256, v.archive_size FROM versions v JOIN nodes n ON n.id = v.node_id
       WHERE v.archive_sha256 IS NOT NULL ORDER BY v.rowid`,
    )
    .iterate() as IterableIterator<ArchivedVersion>;
  return { count, rows };
}

/** Where a version's archive lies under a data dir's `archives/` (local storage's layout). */
export const archiveFile = (archives: string, row: ArchivedVersion) =>
  join(archives, ...archiveKey(row.publisher_id, row.node_id, row.version).split('/'));

/** Creates the data dir if needed and makes it 0700 (an existing one is tightened). */
export function prepareDataDir(dataDir: string): void {
  makeDirs(dataDir, 0o700);
  chmodSync(dataDir, 0o700);
}

/**
 * Creates the SQLite file 0600 before SQLite opens it (SQLite gives its -wal and -shm files the
 * database file's mode), and tightens files an older version made 0644.
 */
export function privateDatabaseFile(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, 0o600);
}

/**
 * Writes `text` to `path` (0600) unless it is there, and gives what is there. Written whole beside it
 * and linked in place: a serve starting on the same new dir meanwhile never reads it half written (an
 * empty secret), and both keep the first one linked.
 */
export function createOnce(path: string, text: string): string {
  if (!existsSync(path)) {
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, text, { mode: 0o600 });
    try {
      linkSync(temp, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      rmSync(temp, { force: true });
    }
  }
  return readFileSync(path, 'utf8').trim();
}

/**
 * Refuses a data dir that is a backup cut short: one still marked in progress, or (backups made
 * before the marker existed) a database without the secret that is copied after it.
 */
export function refuseIncompleteBackup(dataDir: string, embeddedDatabase: boolean): void {
  if (existsSync(join(dataDir, BACKUP_IN_PROGRESS))) {
    throw new Error(
      `${dataDir} is a backup that was never finished (${BACKUP_IN_PROGRESS} is still there): its archives or secret may be missing; ` +
        'serve the data dir it was taken from, or a complete backup (one with backup.json)',
    );
  }
  const database = join(dataDir, 'registry.db');
  if (
    embeddedDatabase &&
    existsSync(database) &&
    !existsSync(join(dataDir, 'secret')) &&
    !existsSync(join(dataDir, BACKUP_COMPLETE))
  ) {
    throw new Error(
      `${dataDir} has a registry.db but no secret: it looks like a backup cut short (the secret is copied last); ` +
        'serve a complete backup, or the data dir it was taken from',
    );
  }
}

/** A file under the archives dir (not an upload in progress, nor the storage's claim), if there is one. */
function someArchive(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === '.tmp' || entry.name.startsWith('.nodereg-')) continue;
    const path = join(dir, entry.name);
    if (entry.isFile()) return path;
    if (entry.isDirectory()) {
      const found = someArchive(path);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Refuses a registry.db that is missing or empty (0 bytes) in a data dir a registry has run in: one
 * with archives, an admin token or a storage record (each written only once the database was made).
 * Started, it would be an empty registry over the archives it lost. The secret alone is no sign: a
 * serve starting on the same new dir writes it before the database.
 */
export function refuseLostDatabase(dataDir: string): void {
  const file = join(dataDir, 'registry.db');
  const size = existsSync(file) ? statSync(file).size : undefined;
  if (size !== undefined && size > 0) return;
  const signs = [join(dataDir, 'admin-token'), join(dataDir, STORAGE_RECORD)].filter((path) => existsSync(path));
  const archive = someArchive(join(dataDir, 'archives'));
  if (archive) signs.push(archive);
  if (signs.length === 0) return;
  throw new Error(
    `${file} is ${size === undefined ? 'missing' : 'empty (0 bytes)'}, but a registry ran in ${dataDir} (${signs.join(', ')}): started, it would serve an empty registry over those; ` +
      `put its registry.db back (from a backup: nodereg backup's OUT/registry.db), or, to start a new registry, use a new data dir`,
  );
}
