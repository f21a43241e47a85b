// Approval that carries over (DESIGN.md §10): an admin who makes a Flagged version Active approves the
// high and critical findings that flagged it, for its node; a later upload of that node whose such
// findings are all approved is not flagged for them, and its status_reason says so.
import { atLeast } from '../../contract/limits.js';
import type { ApprovedFindings, Finding } from '../../contract/scan.js';
import { SCAN_FLAG_AT } from '../../shared/scan.js';
import { readableNode } from '../access.js';
import { forbidden } from '../errors.js';
import type { Principal } from '../route.js';
import type { UploadScan } from '../scan-upload.js';
import type { RegistryStore, VersionRow } from '../store/registry-store.js';

/** The findings of a version an approval covers: those that flag it (high or critical), each with its fingerprint. */
const flagging = (findings: Finding[]) =>
  findings.flatMap(({ fingerprint, rule, severity }) =>
    fingerprint && atLeast(severity, SCAN_FLAG_AT) ? [{ fingerprint, rule }] : [],
  );

/**
 * An admin's decision on a version's status, after the store has it: a Flagged version made Active
 * approves its flagging findings for the node. Every way an admin changes a version's status (`PUT`
 * of the version, a review flow) ends here.
 */
export async function adminDecided(store: RegistryStore, before: VersionRow, after: VersionRow): Promise<void> {
  if (before.status !== 'NodeVersionStatusFlagged' || after.status !== 'NodeVersionStatusActive') return;
  const approved = flagging(after.findings ?? []);
  if (approved.length) await store.approveFindings(after.node_id, after.id, approved);
}

/**
 * At upload, under `--scan flag`: when the scan flags a version for findings only (UploadScan.approvable)
 * and an admin approved every one of them for this node, the status_reason that says so; else undefined
 * (the version is flagged as the scan says).
 */
export async function approvedUpload(
  store: RegistryStore,
  nodeId: string,
  scan: UploadScan | undefined,
): Promise<string | undefined> {
  if (!scan?.flag || !scan.approvable?.length) return undefined;
  const approved = new Map((await store.approvedFindings(nodeId)).map((a) => [a.fingerprint, a]));
  const found = scan.approvable.map((f) => ({ finding: f, approval: approved.get(f.fingerprint ?? '') }));
  if (found.some(({ approval }) => !approval)) return undefined;
  const shown = found
    .slice(0, 2)
    .map(
      ({ finding, approval }) =>
        `${finding.rule} at ${finding.file}:${finding.line} (as in ${approval!.version ?? 'an earlier version'})`,
    )
    .join(', ');
  const more = found.length > 2 ? ` and ${found.length - 2} more` : '';
  return `scan: not flagged: an admin approved every high finding in an earlier version: ${shown}${more}`.slice(
    0,
    1000,
  );
}

/** `GET /nodes/{nodeId}/approved-findings`: the node's publisher members and admins only, as its findings are. */
export async function approvedFindingsOf(
  store: RegistryStore,
  principal: Principal | null,
  nodeId: string,
): Promise<ApprovedFindings> {
  const { node, access } = await readableNode(store, principal, nodeId);
  if (!access.member)
    throw forbidden(`the approved findings of node ${node.id} are shown to its publisher's members and admins only`);
  return { approved: await store.approvedFindings(node.id) };
}
