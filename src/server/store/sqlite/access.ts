// What every part of the SQLite store reads and writes through: statements compiled once, and write
// transactions that take the write lock when they begin.
import type Database from 'better-sqlite3';
import type { Db } from '../db.js';
import type { Row } from '../rows.js';
import { type TurnReads, turnReads } from './turn-reads.js';

export interface SqliteAccess {
  db: Db;
  /** The statement for this SQL, compiled once: compiling costs more than running most of them. */
  prepare(sql: string): Database.Statement;
  /** The first row, or undefined. */
  one(sql: string, ...params: unknown[]): Row | undefined;
  all(sql: string, ...params: unknown[]): Row[];
  /**
   * `fn` as a write transaction that takes the write lock when it begins, so that one that read first
   * never finds the data changed under it by another process sharing the file.
   */
  writing<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  /** `fn`'s value for `key`, read once per event-loop turn (turn-reads.ts says what a request then sees). */
  readOncePerTurn: TurnReads;
}

/** Statements kept at most: updates build their SQL from the fields given. */
const STATEMENTS_KEPT = 500;

export const now = () => new Date().toISOString();

const isRow = (value: unknown): value is Row => typeof value === 'object' && value !== null;

export function sqliteAccess(db: Db): SqliteAccess {
  const statements = new Map<string, Database.Statement>();
  const prepare = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= STATEMENTS_KEPT) statements.clear();
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  return {
    db,
    prepare,
    one(sql, ...params) {
      const row: unknown = prepare(sql).get(...params);
      return isRow(row) ? row : undefined;
    },
    all: (sql, ...params) =>
      prepare(sql)
        .all(...params)
        .filter(isRow),
    writing(fn) {
      const transaction = db.transaction(fn);
      return (...args) => transaction.immediate(...args);
    },
    readOncePerTurn: turnReads(db),
  };
}

/** A value as SQLite stores it: lists as JSON text, booleans as 0 or 1, unset as NULL. */
export function encode(value: unknown, json: boolean): unknown {
  if (value === undefined || value === null) return null;
  if (json) return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/** `SET a = @a, b = @b` for the keys present in `changes` that are allowed columns, and their values. */
export function assignments(changes: Row, allowed: readonly string[], json: ReadonlySet<string>) {
  const keys = allowed.filter((key) => changes[key] !== undefined);
  const values: Row = {};
  for (const key of keys) values[key] = encode(changes[key], json.has(key));
  return { sql: keys.map((key) => `${key} = @${key}`).join(', '), values, empty: keys.length === 0 };
}
