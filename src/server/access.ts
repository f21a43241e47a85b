// The authorization table of DESIGN.md §2, and the 404/403 checks every route makes in its order:
// 404 for a resource in the path, then 403 `forbidden`, then 403 `banned`.
import { banned, conflict, forbidden, HttpError, notFound } from './errors.js';
import type { Principal } from './route.js';
import type { NodeRow, NodeState, PublisherRow, RegistryStore, VersionRow } from './store/registry-store.js';

/** What a principal may do for one publisher. `member` includes owners and that publisher's PATs. */
export interface Access {
  principal: Principal | null;
  publisherId: string;
  admin: boolean;
  owner: boolean;
  member: boolean;
}

/** A caller without a token: no role anywhere. */
export const anonymousAccess = (publisherId: string): Access => ({
  principal: null,
  publisherId,
  admin: false,
  owner: false,
  member: false,
});

export async function accessTo(
  store: RegistryStore,
  principal: Principal | null,
  publisherId: string,
): Promise<Access> {
  if (!principal) return anonymousAccess(publisherId);
  const base = { principal, publisherId };
  if (principal.admin) return { ...base, admin: true, owner: true, member: true };
  if (principal.kind === 'pat' || principal.kind === 'oidc')
    return { ...base, admin: false, owner: false, member: principal.publisherId === publisherId };
  const role = await store.getRole(publisherId, principal.userId);
  return { ...base, admin: false, owner: role === 'owner', member: role !== undefined };
}

export async function requirePublisher(store: RegistryStore, id: string): Promise<PublisherRow> {
  const publisher = await store.getPublisher(id);
  if (!publisher) throw notFound(`publisher ${id} not found`);
  return publisher;
}

/** A node found by any case that belongs to this publisher (another publisher's node is not found here). */
export async function requireNodeOf(store: RegistryStore, publisher: PublisherRow, nodeId: string): Promise<NodeRow> {
  const node = await store.getNode(nodeId);
  if (!node) throw notFound(`node ${nodeId} not found`);
  if (node.publisher_id !== publisher.id)
    throw notFound(`node ${node.id} is not a node of publisher ${publisher.id} (it belongs to ${node.publisher_id})`);
  return node;
}

function refusal(access: Access, level: 'member' | 'owner'): string {
  const { principal, publisherId } = access;
  if (principal?.kind === 'oidc')
    return `this publish token (exchanged for a CI job's OIDC token) publishes for publisher ${principal.publisherId} only, not ${publisherId}`;
  if (principal?.kind === 'pat') {
    return principal.publisherId === publisherId
      ? `a personal access token may not manage publisher ${publisherId}; use the user token of one of its owners`
      : `this personal access token acts for publisher ${principal.publisherId} only, not ${publisherId}`;
  }
  return level === 'owner'
    ? `only an owner of publisher ${publisherId} may do this`
    : `you are not a member of publisher ${publisherId}`;
}

/**
 * A mutating operation on a publisher (and one of its nodes): 403 `forbidden` without the role, then
 * 403 `banned` when the publisher or node is banned, except for admins.
 */
export function allowMutation(
  access: Access,
  level: 'member' | 'owner',
  publisher: PublisherRow,
  node?: NodeRow,
): void {
  requireRole(access, level);
  rejectBanned(access, publisher, node);
}

export function requireRole(access: Access, level: 'member' | 'owner'): void {
  if (!(level === 'owner' ? access.owner : access.member)) throw forbidden(refusal(access, level));
}

export function rejectBanned(access: Access, publisher: PublisherRow, node?: NodeRow): void {
  if (access.admin) return;
  if (publisher.status === 'PublisherStatusBanned') throw banned(`publisher ${publisher.id} is banned`);
  if (node?.status === 'NodeStatusBanned') throw banned(`node ${node.id} is banned`);
}

/** Whether a node shows up for this caller at all (in a publisher's list of nodes). */
export function canSeeNode(access: Access, node: Pick<NodeRow, 'status'>): boolean {
  if (node.status === 'NodeStatusDeleted') return access.member;
  if (node.status === 'NodeStatusBanned') return access.admin;
  return true;
}

/**
 * A read of a node: Deleted is 404 except to members and admins; a Banned node, or any node of a
 * banned publisher, is 403 `banned` except to admins.
 */
export function allowNodeRead(
  access: Pick<Access, 'admin' | 'member'>,
  node: Pick<NodeRow, 'id' | 'status'>,
  publisher: PublisherRow | undefined,
): void {
  if (node.status === 'NodeStatusDeleted' && !access.member) throw notFound(`node ${node.id} not found`);
  if (access.admin) return;
  if (node.status === 'NodeStatusBanned') throw banned(`node ${node.id} is banned`);
  if (publisher?.status === 'PublisherStatusBanned')
    throw banned(`node ${node.id} is unavailable: its publisher ${publisher.id} is banned`);
}

/** allowNodeRead, asking the store for the caller's role only where it decides: a Deleted node. */
export async function allowNodeReadBy(
  store: RegistryStore,
  principal: Principal | null,
  node: NodeState,
  publisher: PublisherRow | undefined,
): Promise<void> {
  const deleted = node.status === 'NodeStatusDeleted';
  allowNodeRead(
    deleted ? await accessTo(store, principal, node.publisher_id) : { admin: principal?.admin === true, member: false },
    node,
    publisher,
  );
}

/** A node to read by any case, with its publisher and the caller's access to it. */
export async function readableNode(
  store: RegistryStore,
  principal: Principal | null,
  nodeId: string,
): Promise<{ node: NodeRow; publisher: PublisherRow | undefined; access: Access }> {
  const node = await store.getNode(nodeId);
  if (!node) throw notFound(`node ${nodeId} not found`);
  const [access, publisher] = await Promise.all([
    accessTo(store, principal, node.publisher_id),
    store.getPublisher(node.publisher_id),
  ]);
  allowNodeRead(access, node, publisher);
  return { node, publisher, access };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * An admin-only field: from anyone else a value equal to the current one is ignored (a GET-modify-PUT
 * round trip works) and a different one is 403. Returns whether the change should be applied.
 */
export function adminOnlyField(admin: boolean, field: string, current: unknown, next: unknown): boolean {
  if (next === undefined) return false;
  if (admin) return true;
  if (same(current, next)) return false;
  throw forbidden(`only an admin may change ${field}`);
}

/** Routes for one's own account take user tokens only: a PAT acts for its publisher, nothing else. */
export function requireUserToken(principal: Principal, what: string): void {
  if (principal.kind === 'pat') {
    throw new HttpError(
      'forbidden',
      `a personal access token may not ${what}; use a user token`,
      undefined,
      "a user token starts with nrg_u_, a publisher's access token with nrg_pat_; `nodereg whoami` shows which one is in use",
    );
  }
}

/**
 * The answer to an upload or a publish of a version that is Banned, Flagged or Deleted: its status
 * wins, so it never becomes Pending or Active that way. Banned is 403 `banned`, the others 409.
 */
export function lockedVersion(version: VersionRow): HttpError {
  const status = version.status.replace('NodeVersionStatus', '').toLowerCase();
  const what = `version ${version.version} of node ${version.node_id} is ${status}`;
  if (version.status === 'NodeVersionStatusBanned')
    return banned(`${what}; it takes no archive and publishing it again does not lift the ban`);
  return conflict(
    `${what}; it takes no archive and publishing it again does not bring it back`,
    'publish a new version number',
  );
}
