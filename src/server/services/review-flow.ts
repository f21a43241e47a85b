// The review flow (DESIGN.md §14): a member's request for a re-review, the admins' queue, and an
// admin's decision. Every step is one entry of the version's status history (status, message, who,
// when), kept in its `status_reason` as the hosted registry's admin tools write it.
// `decideVersion` is the one place a decision is made: work that follows an approval (approving the
// findings' fingerprints) belongs there.
import { auditStatus, versionTarget } from './audit.js';
import { parseStatusReason, type StatusHistoryEntry, withHistoryEntry } from '../../contract/status-reason.js';
import type { REVIEW_DECISIONS } from '../../contract/review-flow.js';
import { requireNodeOf, requirePublisher } from '../access.js';
import { conflict, forbidden, notFound } from '../errors.js';
import type { Principal } from '../route.js';
import type { RegistryStore, VersionRow } from '../store/registry-store.js';
import { adminDecided } from './approvals.js';
import { findVersion, versionToChange } from './nodes.js';

/** The versions the queue lists at most. */
export const REVIEW_QUEUE_MAX = 200;

const DECIDED_STATUS = {
  approve: 'NodeVersionStatusActive',
  ban: 'NodeVersionStatusBanned',
  'ask-change': 'NodeVersionStatusFlagged',
} as const;

async function authorName(store: RegistryStore, principal: Principal): Promise<string> {
  return (await store.getUser(principal.userId))?.name ?? principal.userId;
}

function requireAdmin(principal: Principal | null): Principal {
  if (!principal?.admin) throw forbidden('only an admin may review versions');
  return principal;
}

/** True when the latest entry of the version's history is a member's request for a re-review. */
export function reviewRequested(version: Pick<VersionRow, 'status_reason'>): boolean {
  return parseStatusReason(version.status_reason)?.statusHistory?.at(-1)?.action === 'appeal';
}

async function addEntry(
  store: RegistryStore,
  principal: Principal,
  version: VersionRow,
  entry: StatusHistoryEntry,
): Promise<VersionRow> {
  const updated = await store.updateVersion(version.id, {
    status: entry.status,
    status_reason: withHistoryEntry(version, entry),
  });
  await auditStatus(store, principal, 'version.status', versionTarget(version), version.status, updated.status);
  return updated;
}

/** A member asks for a re-review of a Flagged version (404, 403, then 409 when it is not Flagged). */
export async function appealVersion(
  store: RegistryStore,
  principal: Principal | null,
  path: { publisherId: string; nodeId: string; versionId: string },
  message: string,
): Promise<{ version: VersionRow; publisherId: string }> {
  const { version, publisher } = await versionToChange(store, principal, path);
  if (version.status !== 'NodeVersionStatusFlagged')
    throw conflict(`version ${version.version} is not Flagged; only a Flagged version can be re-reviewed`);
  const entry: StatusHistoryEntry = {
    status: version.status,
    message,
    by: await authorName(store, principal!),
    at: new Date().toISOString(),
    action: 'appeal',
  };
  return { version: await addEntry(store, principal!, version, entry), publisherId: publisher.id };
}

/** The Flagged versions, oldest first, with the publisher of each. */
export async function reviewQueue(
  store: RegistryStore,
  principal: Principal | null,
): Promise<{ version: VersionRow; publisherId: string }[]> {
  requireAdmin(principal);
  const versions = await store.versionsWithStatus('NodeVersionStatusFlagged', REVIEW_QUEUE_MAX);
  const publishers = new Map<string, string>();
  for (const version of versions) {
    if (!publishers.has(version.node_id))
      publishers.set(version.node_id, (await store.getNode(version.node_id))?.publisher_id ?? '');
  }
  return versions.map((version) => ({ version, publisherId: publishers.get(version.node_id) ?? '' }));
}

/**
 * An admin's decision on a version: approve (Active), ban (Banned), or ask for a change (stays
 * Flagged), with the reason the publisher reads; 409 to approve a version with no archive.
 */
export async function decideVersion(
  store: RegistryStore,
  principal: Principal | null,
  path: { nodeId: string; versionId: string },
  decision: { decision: (typeof REVIEW_DECISIONS)[number]; message: string },
): Promise<{ version: VersionRow; publisherId: string; previousStatus: VersionRow['status'] }> {
  const admin = requireAdmin(principal);
  const node = await store.getNode(path.nodeId);
  if (!node) throw notFound(`node ${path.nodeId} not found`);
  const publisher = await requirePublisher(store, node.publisher_id);
  const version = await findVersion(store, await requireNodeOf(store, publisher, path.nodeId), path.versionId);
  const status = DECIDED_STATUS[decision.decision];
  if (status === 'NodeVersionStatusActive' && version.archive_sha256 === null)
    throw conflict(`version ${version.version} has no archive yet; it can be approved once its archive is uploaded`);
  const entry: StatusHistoryEntry = {
    status,
    message: decision.message,
    by: await authorName(store, admin),
    at: new Date().toISOString(),
    action: decision.decision,
  };
  const decided = await addEntry(store, admin, version, entry);
  await adminDecided(store, version, decided);
  return { version: decided, publisherId: publisher.id, previousStatus: version.status };
}
