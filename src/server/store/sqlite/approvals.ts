// The findings admins approved for a node, on SQLite (store/approvals.ts).
import { APPROVAL_ROWS, APPROVALS_LISTED, toApproved, type ApprovalStore } from '../approvals.js';
import { forSqlite } from '../node-classes.js';
import { now, type SqliteAccess } from './access.js';

export function sqliteApprovalStore(access: SqliteAccess): ApprovalStore {
  const approve = access.writing(
    (nodeId: string, versionId: string, findings: { fingerprint: string; rule: string }[]) => {
      const insert = access.prepare(forSqlite(APPROVAL_ROWS.insert));
      const at = now();
      for (const { fingerprint, rule } of findings) insert.run(nodeId, fingerprint, rule, versionId, at);
    },
  );
  return {
    async approveFindings(nodeId, versionId, findings) {
      approve(nodeId, versionId, findings);
    },
    approvedFindings: async (nodeId) =>
      access.all(forSqlite(APPROVAL_ROWS.byNode), nodeId, APPROVALS_LISTED).map(toApproved),
  };
}
