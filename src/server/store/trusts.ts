// Trusted publishing's rows (DESIGN.md §15): the CI workflows a publisher trusts, and the publish tokens
// exchanged for their OIDC tokens. Shared by both stores: the SQL here is read by SQLite and PostgreSQL
// alike ($1… placeholders, each used once and in order, so SQLite reads them as plain ?).
import { optionalText, text, type Row } from './rows.js';

export interface TrustRow {
  id: string;
  publisher_id: string;
  /** The node the trust publishes; null: any node of the publisher. */
  node_id: string | null;
  /** The issuer's name (github, gitlab or one configured). */
  issuer: string;
  repository: string;
  workflow: string;
  environment: string | null;
  /** A ref pattern (`*` any run of characters); null: any ref. */
  ref: string | null;
  /** The owner who registered it: an exchanged token acts for them. */
  created_by: string;
  created_at: string;
}
export type NewTrust = Omit<TrustRow, 'id' | 'created_at'>;

/** A publish token exchanged for an OIDC token: what it may publish, until when, and the claims provenance records. */
export interface ExchangeRow {
  id: string;
  trust_id: string;
  publisher_id: string;
  node_id: string | null;
  user_id: string;
  /** The OIDC token's claims that provenance records, as JSON. */
  claims: string;
  expires_at: string;
  created_at: string;
}
export type NewExchange = Omit<ExchangeRow, 'id' | 'created_at'> & { hash: string };

export interface TrustStore {
  addTrust(input: NewTrust): Promise<TrustRow>;
  listTrusts(publisherId: string): Promise<TrustRow[]>;
  /** Removes the trust and the tokens exchanged through it; false when the publisher has no such trust. */
  removeTrust(publisherId: string, id: string): Promise<boolean>;
  createExchange(input: NewExchange): Promise<ExchangeRow>;
  /** The exchanged token with this hash, expired or not. */
  useExchange(hash: string): Promise<ExchangeRow | undefined>;
  getExchange(id: string): Promise<ExchangeRow | undefined>;
}

export const TRUST_SQL = {
  insertTrust: `INSERT INTO trusts (id, publisher_id, node_id, issuer, repository, workflow, environment, ref, created_by, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
  trust: 'SELECT * FROM trusts WHERE id = $1',
  trusts: 'SELECT * FROM trusts WHERE publisher_id = $1 ORDER BY created_at, id',
  removeExchanges: 'DELETE FROM oidc_exchanges WHERE trust_id = $1',
  removeTrust: 'DELETE FROM trusts WHERE publisher_id = $1 AND id = $2',
  insertExchange: `INSERT INTO oidc_exchanges (id, hash, trust_id, publisher_id, node_id, user_id, claims, expires_at, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  exchangeByHash:
    'SELECT id, trust_id, publisher_id, node_id, user_id, claims, expires_at, created_at FROM oidc_exchanges WHERE hash = $1',
  exchange:
    'SELECT id, trust_id, publisher_id, node_id, user_id, claims, expires_at, created_at FROM oidc_exchanges WHERE id = $1',
};

/** `$1` → `?`: the same statement for SQLite. */
export const forSqlite = (sql: string) => sql.replace(/\$\d+/g, '?');

export const trustValues = (id: string, input: NewTrust, at: string) => [
  id,
  input.publisher_id,
  input.node_id,
  input.issuer,
  input.repository,
  input.workflow,
  input.environment,
  input.ref,
  input.created_by,
  at,
];

export const exchangeValues = (id: string, input: NewExchange, at: string) => [
  id,
  input.hash,
  input.trust_id,
  input.publisher_id,
  input.node_id,
  input.user_id,
  input.claims,
  input.expires_at,
  at,
];

export const decodeTrust = (row: Row): TrustRow => ({
  id: text(row, 'id'),
  publisher_id: text(row, 'publisher_id'),
  node_id: optionalText(row, 'node_id'),
  issuer: text(row, 'issuer'),
  repository: text(row, 'repository'),
  workflow: text(row, 'workflow'),
  environment: optionalText(row, 'environment'),
  ref: optionalText(row, 'ref'),
  created_by: text(row, 'created_by'),
  created_at: text(row, 'created_at'),
});

export const decodeExchange = (row: Row): ExchangeRow => ({
  id: text(row, 'id'),
  trust_id: text(row, 'trust_id'),
  publisher_id: text(row, 'publisher_id'),
  node_id: optionalText(row, 'node_id'),
  user_id: text(row, 'user_id'),
  claims: text(row, 'claims'),
  expires_at: text(row, 'expires_at'),
  created_at: text(row, 'created_at'),
});
