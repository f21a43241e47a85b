// Nodes and their versions: reads with the access rules of DESIGN.md §2, and the changes members and
// admins make to them.
import { auditStatus, versionTarget } from './audit.js';
import type { z } from 'zod';
import {
  NODE_ADMIN_FIELDS,
  NODE_WRITABLE_FIELDS,
  semver as semverRule,
  type NodeInput,
  type VersionUpdateBody,
} from '../../contract/resources.js';
import {
  accessTo,
  adminOnlyField,
  allowMutation,
  allowNodeRead,
  readableNode,
  requireNodeOf,
  requirePublisher,
  type Access,
} from '../access.js';
import { badRequest, conflict, notFound } from '../errors.js';
import type { NodeAnswer, NodeAnswers } from '../node-answers.js';
import { adminDecided } from './approvals.js';
import type { Principal } from '../route.js';
import type { NodeFields, NodeRow, RegistryStore, VersionChanges, VersionRow } from '../store/registry-store.js';

export interface NodeDeps {
  store: RegistryStore;
  nodeAnswers: NodeAnswers;
}

/**
 * The answer of `GET /nodes/{id}`: the cached one when the node's state says it is current (then
 * nothing else is read), else built and cached.
 */
export async function nodeAnswer(
  { store, nodeAnswers }: NodeDeps,
  principal: Principal | null,
  nodeId: string,
): Promise<NodeAnswer> {
  const state = await store.getNodeState(nodeId);
  const cached = state && nodeAnswers.cached(state);
  if (state && cached) {
    allowNodeRead(await accessTo(store, principal, state.publisher_id), state, cached.publisher);
    return cached;
  }
  const { node, publisher } = await readableNode(store, principal, nodeId);
  return nodeAnswers.answer(node, publisher);
}

/** A version of this node by its id or its semver (`v1.2.3` read as `1.2.3`); a version of another node is 404. */
export async function findVersion(store: RegistryStore, node: NodeRow, idOrVersion: string): Promise<VersionRow> {
  const byId = await store.getVersionById(idOrVersion);
  if (byId?.node_id === node.id) return byId;
  const parsed = semverRule.safeParse(idOrVersion);
  const byVersion = parsed.success ? await store.getVersion(node.id, parsed.data) : undefined;
  if (!byVersion) throw notFound(`version ${idOrVersion} of node ${node.id} not found`);
  return byVersion;
}

/** The version `install` answers: the one asked for, else the latest; Active only. */
export async function installableVersion(
  store: RegistryStore,
  node: NodeRow,
  asked: string | undefined,
): Promise<VersionRow> {
  const version = asked ? await findVersion(store, node, asked) : (await store.latestVersions([node.id]))[0];
  if (!version) throw notFound(`node ${node.id} has no active version to install`);
  if (version.status !== 'NodeVersionStatusActive')
    throw notFound(`version ${version.version} of node ${node.id} is not active`);
  return version;
}

/** A body `id` must equal the id in the path. */
export function sameId(field: string, given: string | undefined, path: string): void {
  if (given !== undefined && given !== path) {
    throw badRequest(`${field} "${given}" differs from "${path}" in the path`, [
      { path: field, message: `must equal "${path}"` },
    ]);
  }
}

/**
 * The changes a node body asks for: only the fields present (null clears); read-only fields ignored;
 * admin-only fields checked; `status` Active or Deleted for members, Banned for admins only.
 */
export function nodeChanges(
  input: NodeInput,
  current: NodeRow | undefined,
  admin: boolean,
  withStatus: boolean,
): Partial<NodeFields> {
  const changes: Record<string, unknown> = {};
  for (const field of NODE_WRITABLE_FIELDS) if (input[field] !== undefined) changes[field] = input[field];
  for (const field of NODE_ADMIN_FIELDS)
    if (adminOnlyField(admin, field, current?.[field], input[field])) changes[field] = input[field];
  if (withStatus && input.status !== undefined) {
    const allowed =
      input.status === 'NodeStatusBanned' || current?.status === 'NodeStatusBanned'
        ? adminOnlyField(admin, 'status (to or from NodeStatusBanned)', current?.status, input.status)
        : true;
    if (allowed) changes.status = input.status;
  }
  return changes as Partial<NodeFields>;
}

// A change is checked in two steps, as DESIGN.md §2 orders the answers: who may change what (404,
// 403) before the body is validated (400), then the change itself.

/** The node a member may change (404, 403, 403 banned). */
export async function nodeToChange(
  store: RegistryStore,
  principal: Principal | null,
  path: { publisherId: string; nodeId: string },
) {
  const publisher = await requirePublisher(store, path.publisherId);
  const node = await requireNodeOf(store, publisher, path.nodeId);
  const access = await accessTo(store, principal, publisher.id);
  allowMutation(access, 'member', publisher, node);
  return { node, access };
}

/** `PUT /publishers/{p}/nodes/{n}`: a member's change of a node. */
export async function changeNode(
  store: RegistryStore,
  { node, access }: { node: NodeRow; access: Access },
  pathId: string,
  body: NodeInput,
): Promise<NodeRow> {
  sameId('id', body.id, pathId);
  const updated = await store.updateNode(node.id, nodeChanges(body, node, access.admin, true));
  await auditStatus(store, access.principal, 'node.status', `node:${node.id}`, node.status, updated.status);
  return updated;
}

/** What a version body may change. */
type VersionInput = z.output<typeof VersionUpdateBody>;

/** The version a member may change (404, 403, 403 banned). */
export async function versionToChange(
  store: RegistryStore,
  principal: Principal | null,
  path: { publisherId: string; nodeId: string; versionId: string },
) {
  const publisher = await requirePublisher(store, path.publisherId);
  const node = await requireNodeOf(store, publisher, path.nodeId);
  const version = await findVersion(store, node, path.versionId);
  const access = await accessTo(store, principal, publisher.id);
  allowMutation(access, 'member', publisher, node);
  return { version, access, publisher };
}

/** `PUT …/versions/{v}`: members edit the changelog and deprecation, and may withdraw; every other status is an admin's. */
export async function changeVersion(
  store: RegistryStore,
  { version, access }: { version: VersionRow; access: Access },
  body: VersionInput,
): Promise<VersionRow> {
  const changes: VersionChanges = {};
  if (body.changelog !== undefined) changes.changelog = body.changelog;
  if (body.deprecated !== undefined) changes.deprecated = body.deprecated;
  const withdraw = body.status === 'NodeVersionStatusDeleted' && version.status !== 'NodeVersionStatusBanned';
  if (withdraw || adminOnlyField(access.admin, 'status', version.status, body.status)) changes.status = body.status;
  if (adminOnlyField(access.admin, 'status_reason', version.status_reason, body.status_reason))
    changes.status_reason = body.status_reason;
  if (changes.status === 'NodeVersionStatusActive' && version.archive_sha256 === null) {
    throw conflict(`version ${version.version} has no archive yet; it can become active once its archive is uploaded`);
  }
  const updated = await store.updateVersion(version.id, changes);
  await auditStatus(store, access.principal, 'version.status', versionTarget(version), version.status, updated.status);
  if (access.admin) await adminDecided(store, version, updated);
  return updated;
}
