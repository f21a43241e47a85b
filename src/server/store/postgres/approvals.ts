// The findings admins approved for a node, on PostgreSQL (store/approvals.ts).
import type postgres from 'postgres';
import { APPROVAL_ROWS, APPROVALS_LISTED, toApproved, type ApprovalStore } from '../approvals.js';

export function postgresApprovalStore(sql: postgres.Sql): ApprovalStore {
  return {
    async approveFindings(nodeId, versionId, findings) {
      const at = new Date().toISOString();
      await sql.begin(async (tx) => {
        for (const { fingerprint, rule } of findings)
          await tx.unsafe(APPROVAL_ROWS.insert, [nodeId, fingerprint, rule, versionId, at]);
      });
    },
    approvedFindings: async (nodeId) =>
      (await sql.unsafe(APPROVAL_ROWS.byNode, [nodeId, APPROVALS_LISTED])).map(toApproved),
  };
}
