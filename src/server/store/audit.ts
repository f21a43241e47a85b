// The audit log (the [operate] issue): admin and owner actions, kept in the database (migration
// 'audit-log') and read by admins. Shared by both stores: the SQL here is read by SQLite and PostgreSQL
// alike. A change the store makes in a transaction of its own (a user's lifecycle) writes its entry
// in it; others write theirs once the change is made.
import { randomUUID } from 'node:crypto';
import type { Page } from './registry-store.js';
import { text, optionalText, type Row } from './rows.js';

/** The actions recorded, each `<what>.<verb>`. */
export const AUDIT_ACTIONS = [
  'user.disable',
  'user.enable',
  'user.delete',
  'token.revoke',
  'member.add',
  'member.remove',
  'version.status',
  'node.status',
  'publisher.status',
  'claim.release',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  /** The user who acted (null: the registry itself). */
  actorId: string | null;
  action: AuditAction;
  /** What was acted on: `user:ID`, `token:ID`, `publisher:ID`, `node:ID`, `version:NODE@VERSION`. */
  target: string;
  details?: Record<string, unknown>;
}

// a type, not an interface: it is the wire's AuditEntry too (contract/resources/accounts.ts)
export type AuditRow = {
  id: string;
  at: string;
  actor_id: string | null;
  action: string;
  target: string;
  details: Record<string, unknown>;
};

export interface AuditFilter {
  action?: string;
  target?: string;
  offset: number;
  limit: number;
}

export interface AuditStore {
  audit(entry: AuditEntry): Promise<void>;
  /** Entries, newest first, of one action and one target when given. */
  listAudit(filter: AuditFilter): Promise<Page<AuditRow>>;
}

/** The insert of an entry: its SQL (with `?`) and values. */
export function auditInsert(entry: AuditEntry, at: string): { sql: string; params: unknown[] } {
  return {
    sql: 'INSERT INTO audit_log (id, at, actor_id, action, target, details) VALUES (?, ?, ?, ?, ?, ?)',
    params: [randomUUID(), at, entry.actorId, entry.action, entry.target, JSON.stringify(entry.details ?? {})],
  };
}

/** The filter's WHERE clause (with `?`) and values. */
export function auditWhere(filter: AuditFilter): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (filter.action !== undefined) clauses.push('action = ?'), params.push(filter.action);
  if (filter.target !== undefined) clauses.push('target = ?'), params.push(filter.target);
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

export const auditPageSql = (where: string) =>
  `SELECT id, at, actor_id, action, target, details FROM audit_log ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`;
export const auditCountSql = (where: string) => `SELECT count(*) AS total FROM audit_log ${where}`;

export const decodeAudit = (row: Row): AuditRow => ({
  id: text(row, 'id'),
  at: text(row, 'at'),
  actor_id: optionalText(row, 'actor_id'),
  action: text(row, 'action'),
  target: text(row, 'target'),
  details: JSON.parse(text(row, 'details')) as Record<string, unknown>,
});

/** `?` placeholders numbered as PostgreSQL takes them. */
export const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

const AUDIT_INDEXES = `
CREATE INDEX IF NOT EXISTS audit_by_action ON audit_log(action, seq);
CREATE INDEX IF NOT EXISTS audit_by_target ON audit_log(target, seq);`;
const auditTable = (seq: string) => `
CREATE TABLE IF NOT EXISTS audit_log (
  seq ${seq},
  id TEXT NOT NULL UNIQUE,
  at TEXT NOT NULL,
  actor_id TEXT,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  details TEXT NOT NULL
);${AUDIT_INDEXES}`;
/** Migration 'audit-log': entries in the order they were written (seq); made again over itself, it changes nothing. */
export const AUDIT_SCHEMA = {
  sqlite: auditTable('INTEGER PRIMARY KEY'),
  postgres: auditTable('bigserial PRIMARY KEY'),
};
