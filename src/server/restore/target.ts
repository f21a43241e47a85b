// What restore.ts copies into: the target database, SQLite or PostgreSQL, behind one interface; and
// what both targets share (the report they fill, the refusal of a database that holds a registry).
import type { Db } from '../store/db.js';
import { quote, type Table } from '../restore-catalog.js';

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

export interface Target {
  tables(): Promise<Table[]>;
  /** Refuses (a conflict) a database that holds rows other than those its migrations insert. */
  refuseData(tables: Table[]): Promise<void>;
  copy(source: Db, tables: Table[], secret: string, report: RestoreReport, say: (line: string) => void): Promise<void>;
  keepFiles?(secret: string, adminToken: string | undefined): void;
  dataDir?: string;
  close(): Promise<void>;
}

export const holdsData = (names: string[]) =>
  new RestoreError(
    `the target database already holds a registry (rows in ${names.join(', ')})`,
    'conflict',
    'restore into a new, empty database (create one, e.g. createdb, or name a new SQLite file); restore never merges into a registry',
  );

/** The rows of `table`, in the order they were written, one at a time (memory stays flat). */
export const rowsOf = (source: Db, table: Table) =>
  source
    .prepare(`SELECT ${table.columns.map(quote).join(', ')} FROM ${quote(table.name)} ORDER BY rowid`)
    .iterate() as IterableIterator<Record<string, unknown>>;

export function counted(report: RestoreReport, table: Table, rows: number, say: (line: string) => void): void {
  report.tables[table.name] = rows;
  report.rows += rows;
  if (rows) say(`  ${table.name}: ${rows.toLocaleString('en-US')} row${rows === 1 ? '' : 's'}`);
}
