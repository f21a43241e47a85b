// `nodereg restore`: a SQLite registry (a data dir as `nodereg backup` leaves it, or a stopped
// server's) copied into the database and archive storage that `serve --database` and `--storage` name.
// No table is named here: they are read from the source's catalog and checked against the target's
// after its own migrations, so a table or column a later migration adds is carried, or the restore
// stops before it copies anything. Archives go first, each checked against its version's SHA-256;
// then every row in one transaction, so a failure at any point leaves the target database empty.
import { createReadStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { RESTORE_DEADLINE_MS } from '../shared/tuning.js';
import type { ArchiveStorage } from './archives/storage.js';
import { MemoryBudget, UPLOAD_MEMORY_MAX } from './archives/validate-zip.js';
import type { DatabaseTarget } from './backends.js';
import { archivedVersions, archiveFile, refuseIncompleteBackup } from './data-dir.js';
import { RESULTS_PREFIX } from './proxy/service.js';
import type { Db } from './store/db.js';
import { catalogDifferences, sqliteTables } from './restore-catalog.js';

export {
  catalogDifferences,
  postgresTables,
  POSTGRES_OWN_TABLES,
  SEEDED_TABLES,
  sqliteTables,
  type Table,
} from './restore-catalog.js';
import { migrations } from './store/migrations.js';
import { archiveKey } from './views.js';
import { postgresTarget } from './restore/postgres-target.js';
import { sqliteTarget } from './restore/sqlite-target.js';
import { RestoreError, type RestoreReport } from './restore/target.js';
import { copyMirrorCache } from './mirror/restore-mirror.js';

export { RestoreError, type RestoreReport } from './restore/target.js';

export function openSource(dir: string): { db: Db; secret: string; adminToken: string | undefined } {
  const file = join(dir, 'registry.db');
  if (!existsSync(file))
    throw new RestoreError(
      `${dir} is not a nodereg data dir: it has no registry.db`,
      'source',
      'name the dir nodereg serve used as its --data-dir, or a dir nodereg backup made',
    );
  try {
    refuseIncompleteBackup(dir, true);
  } catch (error) {
    throw new RestoreError((error as Error).message, 'source');
  }
  if (!existsSync(join(dir, 'secret')))
    throw new RestoreError(
      `${dir} has no secret file: signed URLs and callback keys derive from it`,
      'source',
      'restore from the data dir the server used, or from a whole backup',
    );
  const db = new Database(file, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN');
    let version: number;
    try {
      db.prepare('SELECT count(*) FROM sqlite_master').get(); // takes the lock
      version = db.pragma('user_version', { simple: true }) as number;
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_BUSY') {
        throw new RestoreError(
          `${file} is open in a running server`,
          'busy',
          'stop that server first, or restore from a snapshot that nodereg backup makes of it',
        );
      }
      throw new RestoreError(
        `${file} is not a SQLite database nodereg can read: ${(error as Error).message}`,
        'source',
      );
    }
    if (version === 0 || !sqliteTables(db).some((t) => t.name === 'nodes'))
      throw new RestoreError(`${file} is not a nodereg registry`, 'source');
    if (version > migrations.length)
      throw new RestoreError(
        `${file} was written by a newer nodereg (schema ${version}, this one knows ${migrations.length})`,
        'source',
        'restore with that newer nodereg',
      );
    if (version < migrations.length) {
      throw new RestoreError(
        `${file} has an older schema (${version} of ${migrations.length} migrations)`,
        'source',
        `bring it up to date first: nodereg serve --database ${file} --migrate-only`,
      );
    }
    const adminFile = join(dir, 'admin-token');
    return {
      db,
      secret: readFileSync(join(dir, 'secret'), 'utf8').trim(),
      adminToken: existsSync(adminFile) ? readFileSync(adminFile, 'utf8').trim() : undefined,
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

export interface RestoreOptions {
  source: string;
  database: DatabaseTarget;
  /** Opens the archive storage (serve's openStorageTarget). */
  storage: () => Promise<ArchiveStorage>;
  say: (line: string) => void;
  /** How long a PostgreSQL statement may leave its connection silent before the restore fails (RESTORE_DEADLINE_MS). */
  deadlineMs?: number;
}

export async function restore(options: RestoreOptions): Promise<RestoreReport> {
  const source = openSource(options.source);
  try {
    const tables = sqliteTables(source.db);
    const target =
      options.database.kind === 'sqlite'
        ? sqliteTarget(options.database.path, options.source)
        : await postgresTarget(options.database.url, options.deadlineMs ?? RESTORE_DEADLINE_MS);
    try {
      const differences = catalogDifferences(tables, await target.tables());
      if (differences.length)
        throw new Error(`the target's tables differ from the source's after migrating: ${differences.join(', ')}`);
      await target.refuseData(tables);
      const report: RestoreReport = {
        tables: {},
        rows: 0,
        archives: { files: 0, bytes: 0 },
        results: { files: 0, bytes: 0, missing: 0 },
        strays: 0,
        dataDir: target.dataDir,
        adminToken: source.adminToken !== undefined,
      };
      const storage = await options.storage();
      try {
        await copyFiles(source.db, options.source, storage, report, options.say);
      } finally {
        await storage.close?.();
      }
      options.say(`copying the rows of ${tables.length} tables in one transaction…`);
      await target.copy(source.db, tables, source.secret, report, options.say);
      target.keepFiles?.(source.secret, source.adminToken);
      return report;
    } finally {
      await target.close();
    }
  } finally {
    source.db.close();
  }
}

/** Each archive a version has, checked against its SHA-256 and size as it is streamed; then the AI proxy's result files. */
async function copyFiles(
  db: Db,
  dir: string,
  storage: ArchiveStorage,
  report: RestoreReport,
  say: (line: string) => void,
): Promise<void> {
  const root = join(dir, 'archives');
  // the restore's own budget for the receive buffers, as a server has its own (one archive at a time here)
  const memory = new MemoryBudget(UPLOAD_MEMORY_MAX);
  const { count, rows } = archivedVersions(db);
  say(`copying ${count} archive${count === 1 ? '' : 's'}…`);
  // One row at a time (nothing else reads the source meanwhile), each archive streamed: memory stays flat.
  for (const row of rows) {
    const key = archiveKey(row.publisher_id, row.node_id, row.version);
    const file = archiveFile(root, row);
    const what = `the archive of ${row.node_id} ${row.version} (${file})`;
    if (!existsSync(file))
      throw new RestoreError(
        `${what} is missing`,
        'archive',
        'restore from the data dir the server used, or from a whole backup',
      );
    const received = await storage.receive(createReadStream(file), Number.MAX_SAFE_INTEGER, memory);
    if (received.sha256 !== row.archive_sha256 || (row.archive_size !== null && received.size !== row.archive_size)) {
      await storage.discard(received);
      throw new RestoreError(
        `${what} has SHA-256 ${received.sha256} (${received.size} bytes), but its version says ${row.archive_sha256} (${row.archive_size} bytes)`,
        'archive',
      );
    }
    await storage.commit(received, key);
    report.archives.files++;
    report.archives.bytes += received.size;
  }
  // Result files are small (a request body at most) and expire within a day; one whose file is gone is named, not fatal.
  const results = db.prepare('SELECT file, content_type FROM proxy_results WHERE file IS NOT NULL ORDER BY rowid');
  for (const row of results.iterate() as IterableIterator<{ file: string; content_type: string | null }>) {
    const file = join(root, ...(RESULTS_PREFIX + row.file).split('/'));
    const data = await readFile(file).catch(() => undefined);
    if (!data) {
      say(`warning: the AI proxy result ${row.file} has no file (${file}): its URL will answer 404, as it would have`);
      report.results.missing++;
      continue;
    }
    await storage.write(RESULTS_PREFIX + row.file, data, row.content_type ?? 'application/octet-stream');
    report.results.files++;
    report.results.bytes += data.length;
  }
  const mirrored = await copyMirrorCache(root, storage, memory, say);
  report.strays = countFiles(root) - report.archives.files - report.results.files - mirrored.files;
  if (report.strays > 0)
    say(
      `warning: ${report.strays} file${report.strays === 1 ? '' : 's'} under ${root} that no version or result names ${report.strays === 1 ? 'was' : 'were'} not copied`,
    );
}

/** Files under `dir`, without the uploads in progress (.tmp). */
function countFiles(dir: string): number {
  if (!existsSync(dir)) return 0;
  let count = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name !== '.tmp') count += countFiles(join(dir, entry.name));
    else if (entry.isFile()) count++;
  }
  return count;
}
