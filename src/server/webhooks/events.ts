// The events routes hand to the webhooks (deliveries.ts), in one shape.
import type { ServerContext } from '../context.js';
import type { VersionRow } from '../store/registry-store.js';

/** A version's status changed from `previous`: `version.status_changed`, when it did change. */
export function statusChanged(
  ctx: Pick<ServerContext, 'webhooks'>,
  publisherId: string,
  previous: VersionRow['status'],
  version: VersionRow,
): void {
  if (previous === version.status) return;
  ctx.webhooks.emit(publisherId, {
    event: 'version.status_changed',
    node_id: version.node_id,
    version: version.version,
    status: version.status,
    previous_status: previous,
  });
}
