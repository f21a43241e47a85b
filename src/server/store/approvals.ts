// The findings an admin approved for a node (DESIGN.md §10): when an admin makes a Flagged version
// Active, the fingerprints of its high and critical findings are kept here (migration
// 'approved-findings'), and a later version of the node whose such findings are all among them is not
// flagged for them. Shared by both stores: the SQL here is read by SQLite and PostgreSQL alike.

// a type, not an interface: it is the wire's ApprovedFinding too (contract/scan.ts)
export type ApprovedFinding = {
  fingerprint: string;
  rule: string;
  /** The version whose approval approved it (null once that version is gone). */
  version: string | null;
  approved_at: string;
};

export interface ApprovalStore {
  /**
   * Records these findings (fingerprint and rule) as approved for the node, by the approval of version
   * `versionId`; a fingerprint already approved keeps its first approval.
   */
  approveFindings(nodeId: string, versionId: string, findings: { fingerprint: string; rule: string }[]): Promise<void>;
  /** The node's approved findings, oldest approval first (at most APPROVALS_LISTED). */
  approvedFindings(nodeId: string): Promise<ApprovedFinding[]>;
}

/** A node's approvals listed at most: each approval adds at most the findings a version keeps. */
export const APPROVALS_LISTED = 10_000;

export const APPROVAL_ROWS = {
  insert: `INSERT INTO approved_findings (node_id, fingerprint, rule, version_id, approved_at) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (node_id, fingerprint) DO NOTHING`,
  byNode: `SELECT a.fingerprint, a.rule, v.version, a.approved_at FROM approved_findings a
    LEFT JOIN versions v ON v.id = a.version_id WHERE a.node_id = $1 ORDER BY a.approved_at, a.fingerprint LIMIT $2`,
} as const;

export const toApproved = (row: Record<string, unknown>): ApprovedFinding => ({
  fingerprint: row.fingerprint as string,
  rule: row.rule as string,
  version: (row.version as string | null) ?? null,
  approved_at: row.approved_at instanceof Date ? row.approved_at.toISOString() : String(row.approved_at),
});
