// `nodereg restore`: a SQLite registry (a data dir as `nodereg backup` leaves it, or a stopped
// server's) copied into the database and archive storage that `serve --database` and `--storage` name.
// No table is named here: they are read from the source's catalog and checked against the target's
// after its own migrations, so a table or column a later migration adds is carried, or the restore
// stops before it copies anything. Archives go first, each checked against its version's SHA-256;
// then every row in one transaction, so a failure at any point leaves the target database empty.
import { createReadStream, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import type postgres from 'postgres';

type PostgresCell = postgres.ParameterOrJSON<never>;
import { RESTORE_DEADLINE_MS } from '../shared/tuning.js';
import type { ArchiveStorage } from './archives/storage.js';
import type { DatabaseTarget } from './backends.js';
import { archivedVersions, archiveFile, refuseIncompleteBackup } from './data-dir.js';
import { RESULTS_PREFIX } from './proxy/service.js';
import { openDatabase, type Db } from './store/db.js';
import {
  catalogDifferences,
  postgresTables,
  quote,
  SEEDED_TABLES,
  sqliteTables,
  type Table,
} from './restore-catalog.js';

export {
  catalogDifferences,
  postgresTables,
  POSTGRES_OWN_TABLES,
  SEEDED_TABLES,
  sqliteTables,
  type Table,
} from './restore-catalog.js';
import { migrations } from './store/migrations.js';
import { watchedSockets } from './store/postgres-deadline.js';
import { archiveKey } from './views.js';
import { makeDirs } from '../shared/make-dirs.js';
import { copyMirrorCache } from './mirror/restore-mirror.js';

/** Why a restore stopped: `source` and `conflict` are the user's to fix, `archive` a file that is not what its row says. */
export class RestoreError extends Error {
  constructor(
    message: string,
    readonly kind: 'source' | 'busy' | 'conflict' | 'archive',
    readonly hint?: string,
  ) {
    super(message);
  }
}

/** Rows per INSERT into PostgreSQL (and never more than its 65,535 parameters). */
const BATCH_ROWS = 500;

export function openSource(dir: string): { db: Db; secret: string; adminToken: string | undefined } {
  const file = join(dir, 'registry.db');
  if (!existsSync(file))
    throw new RestoreError(
      `${dir} is not a nodereg data dir: it has no registry.db`,
      'source',
      'name the dir `nodereg serve --data-dir` used, or one `nodereg backup` made',
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
          `stop that server first, or restore from a snapshot: \`nodereg backup --data-dir ${dir} OUT\`, then \`nodereg restore OUT\``,
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

export interface RestoreReport {
  tables: Record<string, number>;
  rows: number;
  archives: { files: number; bytes: number };
  results: { files: number; bytes: number; missing: number };
  /** Files under SOURCE/archives that no version or result names: not copied. */
  strays: number;
  /** With SQLite: the dir the target database is in, which now holds the secret and admin token too. */
  dataDir?: string;
  adminToken: boolean;
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
    const received = await storage.receive(createReadStream(file), Number.MAX_SAFE_INTEGER);
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
  const mirrored = await copyMirrorCache(root, storage, say);
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

interface Target {
  tables(): Promise<Table[]>;
  /** Refuses (a conflict) a database that holds rows other than those its migrations insert. */
  refuseData(tables: Table[]): Promise<void>;
  copy(source: Db, tables: Table[], secret: string, report: RestoreReport, say: (line: string) => void): Promise<void>;
  keepFiles?(secret: string, adminToken: string | undefined): void;
  dataDir?: string;
  close(): Promise<void>;
}

const holdsData = (names: string[]) =>
  new RestoreError(
    `the target database already holds a registry (rows in ${names.join(', ')})`,
    'conflict',
    'restore into a new, empty database (create one, e.g. createdb, or name a new SQLite file); restore never merges into a registry',
  );

/** The rows of `table`, in the order they were written, one at a time (memory stays flat). */
const rowsOf = (source: Db, table: Table) =>
  source
    .prepare(`SELECT ${table.columns.map(quote).join(', ')} FROM ${quote(table.name)} ORDER BY rowid`)
    .iterate() as IterableIterator<Record<string, unknown>>;

function counted(report: RestoreReport, table: Table, rows: number, say: (line: string) => void): void {
  report.tables[table.name] = rows;
  report.rows += rows;
  if (rows) say(`  ${table.name}: ${rows.toLocaleString('en-US')} row${rows === 1 ? '' : 's'}`);
}

/** The tables the body of a trigger writes (its statements after BEGIN). */
function writtenBy(triggerSql: string): string[] {
  const body = triggerSql.slice(triggerSql.search(/\bBEGIN\b/i));
  return [
    ...body.matchAll(
      /\b(?:UPDATE(?:\s+OR\s+\w+)?|INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|DELETE\s+FROM)\s+"?(\w+)/gi,
    ),
  ].map((m) => m[1]);
}

/**
 * Another SQLite file, migrated by openDatabase; its dir is a data dir (the secret and admin token go
 * there, next to the archives by default). Triggers that write the copied tables (generations, the
 * rating's sum, the listed count) are dropped while rows go in and put back after, in the same transaction, so every
 * counter is the source's; those that keep the full-text indexes run, so search finds what it found.
 */
function sqliteTarget(path: string, sourceDir: string): Target {
  const dir = dirname(path);
  if (path === join(sourceDir, 'registry.db'))
    throw new RestoreError(
      "the target database is the source's registry.db",
      'source',
      'name a new file or a PostgreSQL database',
    );
  // The dir becomes a data dir: it may hold only what a restore into it leaves (a run that failed left these).
  const own = new Set([basename(path), `${basename(path)}-wal`, `${basename(path)}-shm`, 'archives']);
  const others = existsSync(dir) ? readdirSync(dir).filter((name) => !own.has(name)) : [];
  if (others.length) {
    throw new RestoreError(
      `${dir} already holds ${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''}: the target database's dir becomes a data dir, so it must be new`,
      'conflict',
      'restore into a new, empty directory, e.g. --database NEWDIR/registry.db',
    );
  }
  makeDirs(dir, 0o700);
  const db = openDatabase(path);
  const used = (tables: Table[]) =>
    tables.filter((t) => !SEEDED_TABLES.includes(t.name) && db.prepare(`SELECT 1 FROM ${quote(t.name)} LIMIT 1`).get());
  const refuseData = (tables: Table[]) => {
    const names = used(tables).map((t) => t.name);
    if (names.length) throw holdsData(names);
  };
  return {
    dataDir: dir,
    tables: async () => sqliteTables(db),
    refuseData: async (tables) => refuseData(tables),
    async copy(source, tables, _secret, report, say) {
      const copied = new Set(tables.map((t) => t.name));
      db.transaction(() => {
        refuseData(tables);
        const triggers = (
          db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all() as {
            name: string;
            sql: string;
          }[]
        ).filter((t) => writtenBy(t.sql).some((name) => copied.has(name)));
        for (const trigger of triggers) db.exec(`DROP TRIGGER ${quote(trigger.name)}`);
        for (const table of tables) {
          if (SEEDED_TABLES.includes(table.name)) db.exec(`DELETE FROM ${quote(table.name)}`);
          const insert = db.prepare(
            `INSERT INTO ${quote(table.name)} (${table.columns.map(quote).join(', ')}) VALUES (${table.columns.map(() => '?').join(', ')})`,
          );
          let count = 0;
          for (const row of rowsOf(source, table)) {
            insert.run(...table.columns.map((c) => row[c]));
            count++;
          }
          counted(report, table, count, say);
        }
        for (const trigger of triggers) db.exec(trigger.sql);
        // AUTOINCREMENT counters as far as the source's went (past the ids of rows it deleted, too).
        for (const { name, seq } of source.prepare('SELECT name, seq FROM sqlite_sequence').all() as {
          name: string;
          seq: number;
        }[]) {
          db.prepare('DELETE FROM sqlite_sequence WHERE name = ?').run(name);
          db.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)').run(name, seq);
        }
      }).immediate();
    },
    keepFiles(secret, adminToken) {
      writeFileSync(join(dir, 'secret'), secret, { mode: 0o600, flag: 'wx' });
      if (adminToken !== undefined)
        writeFileSync(join(dir, 'admin-token'), `${adminToken}\n`, { mode: 0o600, flag: 'wx' });
    },
    async close() {
      db.close();
    },
  };
}

/**
 * A PostgreSQL database, migrated as serve migrates it. Rows go in batches; JSON text becomes jsonb and
 * 0/1 booleans; the search column is generated there from the rows. Every trigger of ours is disabled
 * while rows go in (each writes a copied table: generations, the rating's sum), and the sequences are
 * moved past the copied ids. The secret goes into server_secret.
 */
async function postgresTarget(url: string, deadlineMs: number): Promise<Target> {
  const { default: postgres } = await import('postgres');
  const { migratePostgres } = await import('./store/postgres-registry-store.js');
  // `socket` is documented in postgres.js's README ("Custom socket") but missing from its types.
  const sockets = watchedSockets();
  const sql = postgres(url, { max: 1, onnotice: () => {}, socket: sockets.socket } as postgres.Options<{}>);
  const bounded = <T>(work: Promise<T>) => sockets.untilStalled(work, deadlineMs);
  try {
    await bounded(migratePostgres(sql));
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw error;
  }
  const refuseData = async (db: postgres.Sql | postgres.TransactionSql, tables: Table[]) => {
    const used: string[] = [];
    for (const table of tables) {
      if (!SEEDED_TABLES.includes(table.name) && (await db`SELECT 1 FROM ${db(table.name)} LIMIT 1`).length)
        used.push(table.name);
    }
    if (used.length) throw holdsData(used);
  };
  return {
    tables: async () => (await bounded(postgresTables(sql))).tables,
    refuseData: (tables) => bounded(refuseData(sql, tables)),
    async copy(source, tables, secret, report, say) {
      await bounded(
        sql.begin(async (tx) => {
          await refuseData(tx, tables);
          const { types } = await postgresTables(tx);
          for (const table of tables) await tx.unsafe(`ALTER TABLE ${quote(table.name)} DISABLE TRIGGER USER`);
          for (const table of tables) {
            if (SEEDED_TABLES.includes(table.name)) await tx`DELETE FROM ${tx(table.name)}`;
            // SQLite's cells are strings, numbers, bigints, buffers or null: each one a parameter as it is
            const convert = table.columns.map((column): ((v: unknown) => PostgresCell) => {
              const type = types.get(`${table.name}.${column}`);
              if (type === 'jsonb' || type === 'json')
                return (v) => (v === null ? null : tx.json(JSON.parse(v as string)));
              if (type === 'boolean') return (v) => (v === null ? null : Boolean(v));
              return (v) => v as PostgresCell;
            });
            const size = Math.min(BATCH_ROWS, Math.floor(65_000 / table.columns.length));
            let batch: Record<string, PostgresCell>[] = [];
            let count = 0;
            const flush = async () => {
              if (batch.length) await tx`INSERT INTO ${tx(table.name)} ${tx(batch, table.columns)}`;
              count += batch.length;
              batch = [];
            };
            for (const row of rowsOf(source, table)) {
              batch.push(Object.fromEntries(table.columns.map((column, i) => [column, convert[i](row[column])])));
              if (batch.length >= size) await flush();
            }
            await flush();
            counted(report, table, count, say);
          }
          for (const table of tables) await tx.unsafe(`ALTER TABLE ${quote(table.name)} ENABLE TRIGGER USER`);
          // Serial columns continue past the copied ids (and past ids the source used for rows it deleted).
          const sequences = new Map(
            (source.prepare('SELECT name, seq FROM sqlite_sequence').all() as { name: string; seq: number }[]).map(
              (row) => [row.name, row.seq],
            ),
          );
          const serials = await tx<{ table_name: string; column_name: string; sequence: string }[]>`
          SELECT table_name, column_name, pg_get_serial_sequence(quote_ident(table_name), column_name) AS sequence
          FROM information_schema.columns WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%'`;
          for (const serial of serials) {
            const [{ max }] =
              await tx`SELECT max(${tx(serial.column_name)})::bigint AS max FROM ${tx(serial.table_name)}`;
            const next = Math.max(Number(max ?? 0), sequences.get(serial.table_name) ?? 0);
            if (next > 0) await tx`SELECT setval(${serial.sequence}, ${next})`;
          }
          await tx`INSERT INTO server_secret (id, secret) VALUES (1, ${secret}) ON CONFLICT (id) DO UPDATE SET secret = excluded.secret`;
        }),
      );
    },
    // (A server past the deadline would not answer the goodbye either.)
    close: () => sql.end({ timeout: sockets.overdue ? 0 : 5 }),
  };
}
