// What every part of the PostgreSQL store writes through: a connection or a transaction, and changes
// as `SET` lists.
import type postgres from 'postgres';
import type { Row } from '../rows.js';

/** The pool, or one transaction of it. */
export type Sql = postgres.Sql | postgres.TransactionSql;

export const now = () => new Date().toISOString();

/** A value as PostgreSQL stores it: lists as jsonb, unset as NULL. */
export const columnValue = (sql: Sql, json: boolean, value: unknown) =>
  value === undefined || value === null ? null : json ? sql.json(value as postgres.JSONValue) : value;

/** The changes for these columns, as a `SET` list (undefined when none). */
export function setList(
  sql: Sql,
  changes: Row,
  allowed: readonly string[],
  json: ReadonlySet<string>,
): Row | undefined {
  const keys = allowed.filter((key) => changes[key] !== undefined);
  if (keys.length === 0) return undefined;
  return Object.fromEntries(keys.map((key) => [key, columnValue(sql, json.has(key), changes[key])]));
}
