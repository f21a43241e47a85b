// A publisher's webhooks (migration 'webhooks'; webhooks/deliveries.ts sends them). Both stores here:
// the SQL is read by SQLite and PostgreSQL alike ($1… each used once and in order).
import type postgres from 'postgres';
import { forSqlite } from './node-classes.js';
import type { SqliteAccess } from './sqlite/access.js';

export interface WebhookRow {
  id: string;
  publisher_id: string;
  url: string;
  /** The events sent, as JSON text (a list of WEBHOOK_EVENTS). */
  events: string[];
  /** The key of its signatures: the receiver holds it too, so it is kept as given, as the callback key is. */
  secret: string;
  created_by: string;
  created_at: string;
}

export interface WebhookStore {
  addWebhook(row: WebhookRow): Promise<void>;
  /** A publisher's webhooks, oldest first. */
  listWebhooks(publisherId: string): Promise<WebhookRow[]>;
  /** False when the publisher has no such webhook. */
  removeWebhook(publisherId: string, id: string): Promise<boolean>;
}

export const WEBHOOKS_SCHEMA = `
CREATE TABLE IF NOT EXISTS webhooks (
  id            TEXT PRIMARY KEY,
  publisher_id  TEXT NOT NULL REFERENCES publishers(id),
  url           TEXT NOT NULL,
  events        TEXT NOT NULL,
  secret        TEXT NOT NULL,
  created_by    TEXT NOT NULL,
  created_at    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_by_publisher ON webhooks(publisher_id);
`;

const SQL = {
  insert: `INSERT INTO webhooks (id, publisher_id, url, events, secret, created_by, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  list: 'SELECT * FROM webhooks WHERE publisher_id = $1 ORDER BY created_at, id',
  remove: 'DELETE FROM webhooks WHERE publisher_id = $1 AND id = $2',
} as const;

const values = (row: WebhookRow) => [
  row.id,
  row.publisher_id,
  row.url,
  JSON.stringify(row.events),
  row.secret,
  row.created_by,
  row.created_at,
];
const decode = (row: Record<string, unknown>): WebhookRow => ({
  id: String(row.id),
  publisher_id: String(row.publisher_id),
  url: String(row.url),
  events: JSON.parse(String(row.events)) as string[],
  secret: String(row.secret),
  created_by: String(row.created_by),
  created_at: String(row.created_at),
});

export function sqliteWebhookStore(access: SqliteAccess): WebhookStore {
  return {
    async addWebhook(row) {
      access.prepare(forSqlite(SQL.insert)).run(...values(row));
    },
    listWebhooks: async (publisherId) => access.all(forSqlite(SQL.list), publisherId).map(decode),
    removeWebhook: async (publisherId, id) => access.prepare(forSqlite(SQL.remove)).run(publisherId, id).changes > 0,
  };
}

export function postgresWebhookStore(sql: postgres.Sql): WebhookStore {
  return {
    async addWebhook(row) {
      await sql.unsafe(SQL.insert, values(row));
    },
    listWebhooks: async (publisherId) => (await sql.unsafe(SQL.list, [publisherId])).map(decode),
    removeWebhook: async (publisherId, id) => (await sql.unsafe(SQL.remove, [publisherId, id])).count > 0,
  };
}
