// Caps on what one account can create (`serve --caps`), so that a script cannot fill a registry with
// publishers, nodes, versions that never get an archive, or invitations. Admins are not capped.
import { NODE_STATUS } from '../../contract/limits.js';
import { forbidden } from '../errors.js';
import type { Principal } from '../route.js';
import type { RegistryStore } from '../store/registry-store.js';

export interface CreationCaps {
  /** Publishers one user owns. */
  publishers: number;
  /** Nodes one publisher holds, in any status. */
  nodes: number;
  /** Versions of one publisher's nodes waiting for their archive. */
  pendingVersions: number;
  /** Invitations one publisher has out. */
  invitations: number;
}

export const DEFAULT_CREATION_CAPS: CreationCaps = {
  publishers: 10,
  nodes: 1000,
  pendingVersions: 100,
  invitations: 100,
};

/** The flag word of each cap (`serve --caps publishers=20,nodes=500`). */
export const CAP_WORDS: Record<string, keyof CreationCaps> = {
  publishers: 'publishers',
  nodes: 'nodes',
  pending: 'pendingVersions',
  invitations: 'invitations',
};

const refusal = (what: string, cap: number, word: string) =>
  forbidden(
    `${what} (at most ${cap} on this registry)`,
    `an admin of this registry can do it, or raise the cap: serve --caps ${word}=N`,
  );

export async function checkPublisherCap(store: RegistryStore, caps: CreationCaps, principal: Principal) {
  if (principal.admin) return;
  const owned = (await store.publishersOfUser(principal.userId)).filter((p) => p.role === 'owner').length;
  if (owned >= caps.publishers) throw refusal(`you own ${owned} publishers already`, caps.publishers, 'publishers');
}

export async function checkInvitationCap(
  store: RegistryStore,
  caps: CreationCaps,
  principal: Principal,
  publisherId: string,
) {
  if (principal.admin) return;
  const out = (await store.listInvitations({ publisherId })).length;
  if (out >= caps.invitations)
    throw refusal(`publisher ${publisherId} has ${out} invitations out already`, caps.invitations, 'invitations');
}

/** Before a publish: a new node counts against `nodes`, a new version against `pendingVersions`. */
export async function checkPublishCaps(
  store: RegistryStore,
  caps: CreationCaps,
  principal: Principal,
  target: { publisherId: string; nodeId: string | undefined; version: string },
) {
  if (principal.admin) return;
  const { publisherId, nodeId, version } = target;
  if (nodeId === undefined) {
    const beyond = await store.listPublisherNodes(publisherId, {
      statuses: NODE_STATUS,
      offset: caps.nodes - 1,
      limit: 1,
    });
    if (beyond.length > 0)
      throw refusal(`publisher ${publisherId} holds ${caps.nodes} nodes already`, caps.nodes, 'nodes');
  } else if (await store.getVersion(nodeId, version)) return; // a retry creates nothing
  const pending = await store.countPendingVersions(publisherId);
  if (pending >= caps.pendingVersions)
    throw refusal(
      `publisher ${publisherId} has ${pending} versions waiting for their archive already; upload theirs, or delete them`,
      caps.pendingVersions,
      'pending',
    );
}
