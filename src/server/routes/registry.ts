// The five registry operations of the interface, with the semantics of DESIGN.md §3.
import { ARCHIVE_TOO_LARGE_HINT, fieldErrors, NODE_ID_TAKEN_HINT, nodeIdTaken } from '../../contract/errors.js';
import { archiveOverLimit } from '../../contract/size.js';
import { addReview, publishVersion, updateNode, updatePublisher, updateVersion } from '../../contract/registry.js';
import {
  NODE_ADMIN_FIELDS, NODE_WRITABLE_FIELDS, PUBLISHER_WRITABLE_FIELDS, VERSION_PUBLISHED_FIELDS, nodeId as nodeIdRule,
  semver as semverRule, type NodeInput, type PublisherInput,
} from '../../contract/resources.js';
import { accessTo, adminOnlyField, allowMutation, lockedVersion, rejectBanned, requireNodeOf, requirePublisher, requireRole } from '../access.js';
import { signUploadUrl } from '../archives/signing.js';
import type { RouteModule } from '../context.js';
import { badRequest, conflict, forbidden, notFound, tooLarge } from '../errors.js';
import { route } from '../route.js';
import type { NodeFields, NodeRow, PublisherFields, PublisherRow, RegistryStore, VersionChanges, VersionPendingFields, VersionRow } from '../store/registry-store.js';
import { respondWith } from '../node-answers.js';
import { reviewableNode, writeReview } from '../reviews.js';
import { oneNodeView, publisherView, versionView } from '../views.js';

/**
 * The changes a node body asks for: only the fields present (null clears); read-only fields ignored;
 * admin-only fields checked; `status` Active or Deleted for members, Banned for admins only.
 */
function nodeChanges(input: NodeInput, current: NodeRow | undefined, admin: boolean, withStatus: boolean): Partial<NodeFields> {
  const changes: Record<string, unknown> = {};
  for (const field of NODE_WRITABLE_FIELDS) if (input[field] !== undefined) changes[field] = input[field];
  for (const field of NODE_ADMIN_FIELDS) if (adminOnlyField(admin, field, current?.[field], input[field])) changes[field] = input[field];
  if (withStatus && input.status !== undefined) {
    const allowed = input.status === 'NodeStatusBanned' || current?.status === 'NodeStatusBanned'
      ? adminOnlyField(admin, 'status (to or from NodeStatusBanned)', current?.status, input.status)
      : true;
    if (allowed) changes.status = input.status;
  }
  return changes as Partial<NodeFields>;
}

/** The changes a publisher body asks for; `status` is an admin's. */
export function publisherChanges(input: PublisherInput, current: PublisherRow | undefined, admin: boolean): Partial<PublisherFields> {
  const changes: Record<string, unknown> = {};
  for (const field of PUBLISHER_WRITABLE_FIELDS) if (input[field] !== undefined) changes[field] = input[field];
  if (adminOnlyField(admin, 'status', current?.status ?? 'PublisherStatusActive', input.status)) changes.status = input.status;
  return changes as Partial<PublisherFields>;
}

/** A body `id` must equal the id in the path. */
function sameId(field: string, given: string | undefined, path: string): void {
  if (given !== undefined && given !== path) {
    throw badRequest(`${field} "${given}" differs from "${path}" in the path`, [{ path: field, message: `must equal "${path}"` }]);
  }
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

export const registerRegistryRoutes: RouteModule = (app, ctx) => {
  const { store } = ctx;

  route(
    app,
    ctx,
    publishVersion,
    async ({ params, principal, input }) => {
      // A node id another publisher holds, a Deleted node's too (reads hide it), is refused before the
      // publisher is looked up: `publish --create-publisher` learns it before it creates the publisher.
      const node = await store.getNode(params.nodeId);
      if (node && node.publisher_id !== params.publisherId) {
        // whose a Banned node is, only an admin reads (allowNodeRead)
        const holder = node.status === 'NodeStatusBanned' && !principal?.admin ? undefined : node.publisher_id;
        throw forbidden(nodeIdTaken(node.id, holder), NODE_ID_TAKEN_HINT);
      }
      const publisher = await requirePublisher(store, params.publisherId);
      const access = await accessTo(store, principal, publisher.id);
      requireRole(access, 'member');
      rejectBanned(access, publisher, node);
      const { body } = input();
      const pathId = nodeIdRule.safeParse(params.nodeId);
      if (!pathId.success) throw badRequest(`invalid node id "${params.nodeId}"`, fieldErrors(pathId.error.issues, 'nodeId'));
      sameId('node.id', body.node.id, params.nodeId);

      const v = body.node_version;
      // A declared archive over the limit is refused before anything is created.
      if (v.archive_size !== undefined && v.archive_size > ctx.options.maxArchive) {
        throw tooLarge(archiveOverLimit(v.archive_size, ctx.options.maxArchive), ARCHIVE_TOO_LARGE_HINT);
      }
      const declared = v.archive_size !== undefined && v.archive_sha256 !== undefined ? { size: v.archive_size, sha256: v.archive_sha256 } : undefined;
      const outcome = await store.publish({
        publisherId: publisher.id,
        nodeId: params.nodeId,
        node: nodeChanges(body.node, node, access.admin, false),
        // The display name defaults to the id when the node is created, never later.
        nodeDefaults: { name: params.nodeId },
        version: v.version,
        pending: Object.fromEntries(VERSION_PUBLISHED_FIELDS.map((field) => [field, v[field] ?? null])) as VersionPendingFields,
      });
      if (outcome.kind === 'other-publisher') {
        throw forbidden(nodeIdTaken(params.nodeId, outcome.publisherId), NODE_ID_TAKEN_HINT);
      }
      if (outcome.kind === 'archive-exists') {
        throw conflict(`version ${v.version} of node ${outcome.version.node_id} already has an archive`, 'publish a new version number');
      }
      if (outcome.kind === 'status-locked') throw lockedVersion(outcome.version);
      return {
        node_version: versionView(outcome.version, publisher.id, ctx.publicUrl()),
        // The URL names the token that published, so it stops working when that token is revoked.
        signedUrl: signUploadUrl(ctx.keys.upload, ctx.publicUrl(), outcome.version.id, Date.now(), declared, principal!.tokenId),
      };
    },
    { bodyCredential: 'personal_access_token' },
  );

  route(app, ctx, updateNode, async ({ params, principal, input }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    const node = await requireNodeOf(store, publisher, params.nodeId);
    const access = await accessTo(store, principal, publisher.id);
    allowMutation(access, 'member', publisher, node);
    const { body } = input();
    sameId('id', body.id, params.nodeId);
    const updated = await store.updateNode(node.id, nodeChanges(body, node, access.admin, true));
    return oneNodeView(store, updated, ctx.publicUrl());
  });

  route(app, ctx, updatePublisher, async ({ params, principal, input }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    const access = await accessTo(store, principal, publisher.id);
    allowMutation(access, 'owner', publisher);
    const { body } = input();
    sameId('id', body.id, params.publisherId);
    const updated = await store.updatePublisher(publisher.id, publisherChanges(body, publisher, access.admin));
    return publisherView(updated, { rows: await store.listMembers(publisher.id), showEmails: true });
  });

  route(app, ctx, updateVersion, async ({ params, principal, input }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    const node = await requireNodeOf(store, publisher, params.nodeId);
    const version = await findVersion(store, node, params.versionId);
    const access = await accessTo(store, principal, publisher.id);
    allowMutation(access, 'member', publisher, node);
    const { body } = input();
    const changes: VersionChanges = {};
    if (body.changelog !== undefined) changes.changelog = body.changelog;
    if (body.deprecated !== undefined) changes.deprecated = body.deprecated;
    // Members may withdraw a version (Deleted) unless it is banned; every other status is an admin's.
    const withdraw = body.status === 'NodeVersionStatusDeleted' && version.status !== 'NodeVersionStatusBanned';
    if (withdraw || adminOnlyField(access.admin, 'status', version.status, body.status)) changes.status = body.status;
    if (adminOnlyField(access.admin, 'status_reason', version.status_reason, body.status_reason)) changes.status_reason = body.status_reason;
    if (changes.status === 'NodeVersionStatusActive' && version.archive_sha256 === null) {
      throw conflict(`version ${version.version} has no archive yet; it can become active once its archive is uploaded`);
    }
    const updated = await store.updateVersion(version.id, changes);
    return versionView(updated, publisher.id, ctx.publicUrl(), true);
  });

  route(app, ctx, addReview, async ({ c, params, principal, input }) => {
    const node = await reviewableNode(store, ctx.nodeAnswers, principal!, params.nodeId);
    const { query } = input();
    return respondWith(c, await writeReview(store, ctx.nodeAnswers, principal!, node, query.star));
  });
};
