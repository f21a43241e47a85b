// What the audit log records of a change made outside the store's own transactions (store/audit.ts):
// written once the change is made.
import type { Principal } from '../route.js';
import type { AuditAction } from '../store/audit.js';
import type { RegistryStore, VersionRow } from '../store/registry-store.js';

/** Records a status change (nothing when the status stayed). */
export async function auditStatus(
  store: RegistryStore,
  principal: Principal | null,
  action: Extract<AuditAction, `${string}.status`>,
  target: string,
  from: string,
  to: string,
): Promise<void> {
  if (from === to) return;
  await store.audit({ actorId: principal?.userId ?? null, action, target, details: { from, to } });
}

export const versionTarget = (version: Pick<VersionRow, 'node_id' | 'version'>) =>
  `version:${version.node_id}@${version.version}`;
