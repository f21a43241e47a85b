// Row decoders: a row as a database driver gives it → the domain object the store returns, checked
// field by field. SQLite and PostgreSQL give the same columns in different shapes (0/1 or booleans,
// JSON as text or parsed, bigints as text), and each reader takes both, so one decoder serves both
// stores. A row that does not fit is a bug or a damaged database: RowShapeError names the column.
import type { Finding } from '../../contract/scan.js';
import { MEMBER_ROLES, NODE_STATUS, NODE_VERSION_STATUS, PUBLISHER_STATUS } from '../../contract/limits.js';
import type {
  InvitationRow,
  MemberRow,
  NodeState,
  PublisherRow,
  TokenRow,
  UserRow,
  VersionRow,
} from './registry-store.js';

export type Row = Record<string, unknown>;

export class RowShapeError extends Error {
  constructor(key: string, value: unknown) {
    super(
      `the column ${key} holds ${JSON.stringify(value)?.slice(0, 60) ?? typeof value}, which the store never writes there`,
    );
  }
}

export function text(row: Row, key: string): string {
  const value = row[key];
  if (typeof value !== 'string') throw new RowShapeError(key, value);
  return value;
}

export function optionalText(row: Row, key: string): string | null {
  return row[key] === null || row[key] === undefined ? null : text(row, key);
}

/** A number, given as a number or (a PostgreSQL bigint) as its digits. */
export function count(row: Row, key: string): number {
  const value = row[key];
  const number = typeof value === 'string' && value !== '' ? Number(value) : value;
  if (typeof number !== 'number' || Number.isNaN(number)) throw new RowShapeError(key, value);
  return number;
}

export function optionalCount(row: Row, key: string): number | null {
  return row[key] === null || row[key] === undefined ? null : count(row, key);
}

/** A boolean, given as one (PostgreSQL) or as 0 or 1 (SQLite). */
export function flag(row: Row, key: string): boolean {
  const value = row[key];
  if (value === true || value === 1) return true;
  if (value === false || value === 0) return false;
  throw new RowShapeError(key, value);
}

export function oneOf<T extends string>(row: Row, key: string, values: readonly T[]): T {
  const value = row[key];
  const found = values.find((allowed) => allowed === value);
  if (found === undefined) throw new RowShapeError(key, value);
  return found;
}

/** A JSON column, given as its text (SQLite) or parsed (PostgreSQL); null when unset. */
export function json(row: Row, key: string): unknown {
  const value = row[key];
  return typeof value === 'string' ? JSON.parse(value) : (value ?? null);
}

/** A JSON column holding a list of strings, or null. */
export function textList(row: Row, key: string): string[] | null {
  const value = json(row, key);
  if (value === null) return null;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw new RowShapeError(key, value);
  return value;
}

export const decodeUser = (row: Row): UserRow => ({
  id: text(row, 'id'),
  name: text(row, 'name'),
  email: optionalText(row, 'email'),
  admin: flag(row, 'admin'),
  created_at: text(row, 'created_at'),
  disabled_at: optionalText(row, 'disabled_at'),
  deleted_at: optionalText(row, 'deleted_at'),
});

export const decodeToken = (row: Row): TokenRow => ({
  id: text(row, 'id'),
  kind: oneOf(row, 'kind', ['user', 'pat'] as const),
  user_id: text(row, 'user_id'),
  publisher_id: optionalText(row, 'publisher_id'),
  name: text(row, 'name'),
  prefix: text(row, 'prefix'),
  created_at: text(row, 'created_at'),
  last_used_at: optionalText(row, 'last_used_at'),
  revoked_at: optionalText(row, 'revoked_at'),
});

export const decodePublisher = (row: Row): PublisherRow => ({
  id: text(row, 'id'),
  name: optionalText(row, 'name'),
  description: optionalText(row, 'description'),
  logo: optionalText(row, 'logo'),
  source_code_repo: optionalText(row, 'source_code_repo'),
  support: optionalText(row, 'support'),
  website: optionalText(row, 'website'),
  status: oneOf(row, 'status', PUBLISHER_STATUS),
  created_at: text(row, 'created_at'),
});

export const decodeRole = (row: Row) => oneOf(row, 'role', MEMBER_ROLES);

/** A row of MEMBER_SELECT (member-row.ts). */
export const decodeMember = (row: Row): MemberRow => ({
  id: text(row, 'id'),
  publisher_id: text(row, 'publisher_id'),
  role: decodeRole(row),
  created_at: text(row, 'created_at'),
  user: { id: text(row, 'user_id'), name: text(row, 'user_name'), email: optionalText(row, 'user_email') },
});

/** A row of INVITATION_SELECT (member-row.ts). */
export const decodeInvitation = (row: Row): InvitationRow => {
  const invitedBy = optionalText(row, 'invited_by');
  return {
    publisher: { id: text(row, 'publisher_id'), name: optionalText(row, 'publisher_name') },
    user: { id: text(row, 'user_id'), name: text(row, 'user_name') },
    role: decodeRole(row),
    invited_by: invitedBy === null ? null : { id: invitedBy, name: text(row, 'invited_by_name') },
    created_at: text(row, 'created_at'),
  };
};

/** The columns of a NodeState. */
export const NODE_STATE_COLUMNS = 'id, publisher_id, status, created_at, generation, rating';

export const decodeNodeState = (row: Row): NodeState => ({
  id: text(row, 'id'),
  publisher_id: text(row, 'publisher_id'),
  status: oneOf(row, 'status', NODE_STATUS),
  created_at: text(row, 'created_at'),
  generation: count(row, 'generation'),
  rating: count(row, 'rating'),
});

/** Findings as the scan wrote them (a rule the scanner has since renamed stays readable). */
const isFinding = (value: unknown): value is Finding =>
  typeof value === 'object' &&
  value !== null &&
  'rule' in value &&
  typeof value.rule === 'string' &&
  'file' in value &&
  typeof value.file === 'string';

const findings = (row: Row): Finding[] | null => {
  const value = json(row, 'findings');
  if (value === null) return null;
  if (!Array.isArray(value) || !value.every(isFinding)) throw new RowShapeError('findings', value);
  return value;
};

export const decodeVersion = (row: Row): VersionRow => ({
  id: text(row, 'id'),
  node_id: text(row, 'node_id'),
  version: text(row, 'version'),
  changelog: optionalText(row, 'changelog'),
  dependencies: textList(row, 'dependencies'),
  supported_accelerators: textList(row, 'supported_accelerators'),
  supported_appui_frontend_version: optionalText(row, 'supported_appui_frontend_version'),
  supported_appui_version: optionalText(row, 'supported_appui_version'),
  supported_os: textList(row, 'supported_os'),
  tags: textList(row, 'tags'),
  tags_admin: textList(row, 'tags_admin'),
  deprecated: flag(row, 'deprecated'),
  status: oneOf(row, 'status', NODE_VERSION_STATUS),
  status_reason: optionalText(row, 'status_reason'),
  archive_sha256: optionalText(row, 'archive_sha256'),
  archive_size: optionalCount(row, 'archive_size'),
  findings: findings(row),
  app_node_extract_status: optionalText(row, 'app_node_extract_status'),
  app_node_extract_reason: optionalText(row, 'app_node_extract_reason'),
  uploaded_at: optionalText(row, 'uploaded_at'),
  created_at: text(row, 'created_at'),
  provenance: row.provenance === undefined ? null : optionalText(row, 'provenance'),
});

export interface ArchiveClaim {
  version_id: string;
  key: string;
  created_at: string;
}

export const decodeClaim = (row: Row): ArchiveClaim => ({
  version_id: text(row, 'version_id'),
  key: text(row, 'key'),
  created_at: text(row, 'created_at'),
});

/** The first row of a query, or undefined. */
export const first = <T>(rows: readonly Row[], decode: (row: Row) => T): T | undefined =>
  rows.length ? decode(rows[0]) : undefined;

/** The first row of a query that always answers one (an aggregate, or a row this transaction wrote). */
export function only<T>(rows: readonly Row[], decode: (row: Row) => T, what: string): T {
  if (rows.length === 0) throw new Error(`${what}: no row`);
  return decode(rows[0]);
}
