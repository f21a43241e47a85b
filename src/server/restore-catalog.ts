// The tables a restore copies, read from each side's catalog (restore.ts): no table is named in code,
// so a table or column a later migration adds is carried, or the restore stops before it copies.
import type postgres from 'postgres';
import type { Db } from './store/db.js';

export interface Table {
  name: string;
  columns: string[];
}

/**
 * Tables whose rows the migrations themselves insert (the 'tokens' generation, the count of listed
 * nodes): a new database has them, and restore replaces them with the source's. A test holds this list
 * to what the migrations do.
 */
export const SEEDED_TABLES = ['counts', 'generations'];
/**
 * PostgreSQL's tables of its own: its migration history, the secret SQLite keeps in DIR/secret, and the
 * instances' shared rate-limit counts of the current minute (one process's limit lives in its memory on SQLite).
 */
export const POSTGRES_OWN_TABLES = ['schema_migrations', 'server_secret', 'rate_windows'];
export const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The tables of a SQLite registry that hold rows of their own, parents before children (by their
 * foreign keys), with their columns. Full-text indexes (virtual tables and their shadow tables) are
 * left out: they are rebuilt from the rows, by the target's own triggers.
 */
export function sqliteTables(db: Db): Table[] {
  const names = (db.pragma('table_list') as { schema: string; name: string; type: string }[])
    .filter((t) => t.schema === 'main' && t.type === 'table' && !t.name.startsWith('sqlite_'))
    .map((t) => t.name)
    .sort();
  const ordered: string[] = [];
  const visit = (name: string, path: string[]) => {
    if (ordered.includes(name) || path.includes(name)) return;
    const parents = (db.pragma(`foreign_key_list(${quote(name)})`) as { table: string }[]).map((key) => key.table);
    for (const parent of parents) visit(parent, [...path, name]);
    ordered.push(name);
  };
  for (const name of names) visit(name, []);
  return ordered.map((name) => ({
    name,
    columns: (db.pragma(`table_info(${quote(name)})`) as { name: string }[]).map((c) => c.name),
  }));
}

interface PostgresColumn {
  table_name: string;
  column_name: string;
  data_type: string;
  is_generated: string;
}

/** The columns of the PostgreSQL registry's tables (its own tables left out); generated ones are computed there, never copied. */
export async function postgresTables(
  sql: postgres.Sql | postgres.TransactionSql,
): Promise<{ tables: Table[]; types: Map<string, string> }> {
  const rows = await sql<PostgresColumn[]>`
    SELECT c.table_name, c.column_name, c.data_type, c.is_generated FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
    WHERE c.table_schema = current_schema() ORDER BY c.table_name, c.ordinal_position`;
  const tables = new Map<string, string[]>();
  const types = new Map<string, string>();
  for (const row of rows) {
    if (POSTGRES_OWN_TABLES.includes(row.table_name) || row.is_generated === 'ALWAYS') continue;
    tables.set(row.table_name, [...(tables.get(row.table_name) ?? []), row.column_name]);
    types.set(`${row.table_name}.${row.column_name}`, row.data_type);
  }
  return { tables: [...tables].map(([name, columns]) => ({ name, columns })), types };
}

/** What the target has that the source lacks, or the reverse, as `table` or `table.column`; empty when they match. */
export function catalogDifferences(source: Table[], target: Table[]): string[] {
  const columns = (tables: Table[]) =>
    new Set(tables.flatMap((t) => [t.name, ...t.columns.map((c) => `${t.name}.${c}`)]));
  const [from, to] = [columns(source), columns(target)];
  return [
    ...[...from].filter((x) => !to.has(x)).map((x) => `${x} (only in the source)`),
    ...[...to].filter((x) => !from.has(x)).map((x) => `${x} (only in the target)`),
  ];
}

/**
 * Opens SOURCE/registry.db for the whole restore, refusing what is not a whole nodereg data dir of
 * this version, and one that a running server has open: the exclusive lock taken here fails while
 * any other connection holds the database, and keeps a server from opening it until restore ends.
 */
