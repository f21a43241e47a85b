// What the web pages keep and read beyond the registry's rows (DESIGN.md §14): signed-in sessions
// (migration 'web-sessions'), and the versions waiting for an admin's review. The SQL is read by
// SQLite and PostgreSQL alike; each store composes its half below.
import type postgres from 'postgres';
import { decodeVersion, first, text, type Row } from './rows.js';
import type { VersionRow } from './registry-store.js';
import type { SqliteAccess } from './sqlite/access.js';

export interface SessionRow {
  user_id: string;
  token_id: string;
  csrf: string;
  expires_at: string;
}

export interface WebStore {
  /** Keeps a session under the hash of its cookie's value; drops the expired ones on the way. */
  createSession(hash: string, session: SessionRow): Promise<void>;
  /** The live session with this hash; undefined when unknown or expired. */
  getSession(hash: string): Promise<SessionRow | undefined>;
  deleteSession(hash: string): Promise<void>;
  /** The versions with this status, oldest first, at most `limit`. */
  versionsWithStatus(status: VersionRow['status'], limit: number): Promise<VersionRow[]>;
}

const SQL = {
  purge: 'DELETE FROM web_sessions WHERE expires_at <= $1',
  insert: 'INSERT INTO web_sessions (hash, user_id, token_id, csrf, expires_at) VALUES ($1, $2, $3, $4, $5)',
  get: 'SELECT user_id, token_id, csrf, expires_at FROM web_sessions WHERE hash = $1 AND expires_at > $2',
  delete: 'DELETE FROM web_sessions WHERE hash = $1',
  byStatus: 'SELECT * FROM versions WHERE status = $1 ORDER BY created_at, id LIMIT $2',
} as const;

const decodeSession = (row: Row): SessionRow => ({
  user_id: text(row, 'user_id'),
  token_id: text(row, 'token_id'),
  csrf: text(row, 'csrf'),
  expires_at: text(row, 'expires_at'),
});

const sqlite = (statement: string) => statement.replace(/\$\d/g, '?');

export function sqliteWebStore(access: SqliteAccess): WebStore {
  const create = access.writing((hash: string, s: SessionRow, at: string) => {
    access.prepare(sqlite(SQL.purge)).run(at);
    access.prepare(sqlite(SQL.insert)).run(hash, s.user_id, s.token_id, s.csrf, s.expires_at);
  });
  return {
    createSession: async (hash, session) => create(hash, session, new Date().toISOString()),
    getSession: async (hash) => first(access.all(sqlite(SQL.get), hash, new Date().toISOString()), decodeSession),
    async deleteSession(hash) {
      access.prepare(sqlite(SQL.delete)).run(hash);
    },
    versionsWithStatus: async (status, limit) => access.all(sqlite(SQL.byStatus), status, limit).map(decodeVersion),
  };
}

export function postgresWebStore(sql: postgres.Sql): WebStore {
  return {
    async createSession(hash, s) {
      await sql.begin((tx) => [
        tx.unsafe(SQL.purge, [new Date().toISOString()]),
        tx.unsafe(SQL.insert, [hash, s.user_id, s.token_id, s.csrf, s.expires_at]),
      ]);
    },
    getSession: async (hash) => first(await sql.unsafe(SQL.get, [hash, new Date().toISOString()]), decodeSession),
    async deleteSession(hash) {
      await sql.unsafe(SQL.delete, [hash]);
    },
    versionsWithStatus: async (status, limit) => (await sql.unsafe(SQL.byStatus, [status, limit])).map(decodeVersion),
  };
}

/** The table of sessions, the same on both databases (appended to each migration list). */
export const WEB_SESSIONS_TABLE = `
  CREATE TABLE IF NOT EXISTS web_sessions (
    hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    token_id TEXT NOT NULL,
    csrf TEXT NOT NULL,
    expires_at TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS web_sessions_by_expiry ON web_sessions(expires_at);
  CREATE INDEX IF NOT EXISTS versions_by_status ON versions(status, created_at);
`;
