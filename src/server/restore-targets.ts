// The databases `nodereg restore` writes into: another SQLite file or a PostgreSQL database, each
// migrated first and refused when it already holds a registry.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type postgres from 'postgres';
import { makeDirs } from '../shared/make-dirs.js';
import {
  BATCH_ROWS,
  postgresTables,
  quote,
  RestoreError,
  SEEDED_TABLES,
  sqliteTables,
  type RestoreReport,
  type Table,
} from './restore-catalog.js';
import { openDatabase, type Db } from './store/db.js';
import { migrations } from './store/migrations.js';
import { watchedSockets } from './store/postgres-deadline.js';

export interface Target {
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
export function sqliteTarget(path: string, sourceDir: string): Target {
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
export async function postgresTarget(url: string, deadlineMs: number): Promise<Target> {
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
            const convert = table.columns.map((column) => {
              const type = types.get(`${table.name}.${column}`);
              if (type === 'jsonb' || type === 'json')
                return (v: unknown) => (v === null ? null : tx.json(JSON.parse(v as string)));
              if (type === 'boolean') return (v: unknown) => (v === null ? null : Boolean(v));
              return (v: unknown) => v;
            });
            const size = Math.min(BATCH_ROWS, Math.floor(65_000 / table.columns.length));
            let batch: Record<string, unknown>[] = [];
            let count = 0;
            const flush = async () => {
              if (batch.length) await tx`INSERT INTO ${tx(table.name)} ${tx(batch as never, table.columns)}`;
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
