// What `nodereg backup` copies of a registry's storage, wherever it is (a dir or a bucket): every file
// the snapshot of its database names, by key, into the backup's own archives/ dir (local storage's
// layout), so that `nodereg restore` and `serve --data-dir BACKUP` find them there. Each archive is
// checked against its version's SHA-256 as it is copied: a backup never holds what restore would refuse.
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type Database from 'better-sqlite3';
import { readClaim } from './archives/registry-claim.js';
import type { OpenedArchive } from './archives/storage.js';
import { archivedVersions, type ArchivedVersion } from './data-dir.js';
import { entryKey, INDEX_KEY, mirroredArchiveKey, type MirrorEntry } from './mirror/cache.js';
import { RESULTS_PREFIX } from './proxy/deps.js';
import { archiveKey } from './views.js';

/** A backup that would not be whole or true: none is made (the CLI exits 2, naming what to fix). */
export class BackupRefused extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

export interface StoredFiles {
  /** The file at `key`, or undefined when there is none. */
  open(key: string): Promise<OpenedArchive | undefined>;
  /** The storage as an operator names it: a dir or s3://bucket/prefix. */
  location: string;
}

export interface CopyTotals {
  files: number;
  bytes: number;
}

/** Copies the file at `key` into `to` (local layout); its SHA-256, or undefined when there is no such file. */
async function copyKey(from: StoredFiles, key: string, to: string, totals: CopyTotals): Promise<string | undefined> {
  const opened = await from.open(key);
  if (!opened) return undefined;
  const file = join(to, ...key.split('/'));
  mkdirSync(dirname(file), { recursive: true });
  const hash = createHash('sha256');
  let size = 0;
  const measure = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(opened.stream, measure, createWriteStream(file, { mode: 0o600 }));
  totals.files++;
  totals.bytes += size;
  return hash.digest('hex');
}

/** Each version's archive; every one missing or not matching its SHA-256 refuses the backup. */
async function copyVersions(db: Database.Database, from: StoredFiles, to: string, totals: CopyTotals): Promise<void> {
  const { count, rows } = archivedVersions(db);
  const missing: ArchivedVersion[] = [];
  for (const row of [...rows]) {
    const sha256 = await copyKey(from, archiveKey(row.publisher_id, row.node_id, row.version), to, totals);
    if (sha256 === undefined) missing.push(row);
    else if (sha256 !== row.archive_sha256)
      throw new BackupRefused(
        `the archive of ${row.node_id} ${row.version} in ${from.location} has SHA-256 ${sha256}, but its version says ${row.archive_sha256}: restore would refuse it, so no backup was made`,
        `check that ${from.location} is this registry's storage; if it is, the archive is damaged: restore it from the bucket's versioning or an older backup`,
      );
  }
  if (missing.length === 0) return;
  throw new BackupRefused(
    `${missing.length} of ${count} archives are not in ${from.location} (${missing[0].node_id} ${missing[0].version} first): the backup would not be whole, so none was made`,
    'if `nodereg serve` keeps the archives elsewhere (--storage DIR or NODEREG_STORAGE_URL), give backup the same --storage',
  );
}

/** The AI proxy's result files (one gone is not fatal: restore names it), and the mirror's cache. */
async function copyExtras(db: Database.Database, from: StoredFiles, to: string, totals: CopyTotals): Promise<void> {
  const results = db.prepare('SELECT file FROM proxy_results WHERE file IS NOT NULL ORDER BY rowid');
  for (const row of [...results.iterate()] as { file: string }[])
    await copyKey(from, RESULTS_PREFIX + row.file, to, totals);
  if ((await copyKey(from, INDEX_KEY, to, totals)) === undefined) return;
  const index = JSON.parse(readFileSync(join(to, ...INDEX_KEY.split('/')), 'utf8')) as { nodes: string[] };
  for (const id of index.nodes) {
    if ((await copyKey(from, entryKey(id), to, totals)) === undefined) continue;
    const entry = JSON.parse(readFileSync(join(to, ...entryKey(id).split('/')), 'utf8')) as MirrorEntry;
    // an archive the cache no longer holds is fetched again on its next download; restore checks the rest
    for (const version of Object.keys(entry.archives))
      await copyKey(from, mirroredArchiveKey(entry.id, version), to, totals);
  }
}

/** Refuses a storage whose claim names another registry than the database's: its archives are not this registry's. */
async function refuseForeignStorage(db: Database.Database, from: StoredFiles): Promise<void> {
  const hasIdentity = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'registry_identity'")
    .get();
  const row = hasIdentity
    ? (db.prepare('SELECT registry_id FROM registry_identity WHERE id = 1').get() as
        | { registry_id: string }
        | undefined)
    : undefined;
  if (!row) return; // a registry never started by a version that claims its storage
  const claim = await readClaim(from);
  if (claim === undefined || claim === row.registry_id) return;
  throw new BackupRefused(
    `${from.location} belongs to another registry (its claim names ${claim || 'no registry'}), not to this one (${row.registry_id}): its archives are not this registry's, so no backup was made`,
    'give backup the storage this registry serves (--storage or NODEREG_STORAGE_URL), or none: it reads it from the data dir',
  );
}

/** Copies every file the database `db` names out of `from` into the dir `to`. */
export async function copyStoredFiles(
  db: Database.Database,
  from: StoredFiles,
  to: string,
  totals: CopyTotals,
): Promise<void> {
  await refuseForeignStorage(db, from);
  mkdirSync(to, { recursive: true });
  await copyVersions(db, from, to, totals);
  await copyExtras(db, from, to, totals);
}
