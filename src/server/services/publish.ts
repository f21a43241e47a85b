// Publish (`POST /publishers/{p}/nodes/{n}/versions`): creates the node or changes it, creates the
// version (Pending until its archive arrives), and signs the URL its archive is uploaded to
// (services/archive-intake.ts takes it there).
import type { z } from 'zod';
import {
  ARCHIVE_TOO_LARGE_HINT,
  fieldErrors,
  NODE_ID_TAKEN_HINT,
  nodeIdLookalike,
  nodeIdTaken,
} from '../../contract/errors.js';
import { VERSION_PUBLISHED_FIELDS, nodeId as nodeIdRule, type PublishBody } from '../../contract/resources.js';
import { archiveOverLimit } from '../../contract/size.js';
import { accessTo, lockedVersion, rejectBanned, requirePublisher, requireRole, type Access } from '../access.js';
import { signUploadUrl } from '../archives/signing.js';
import { badRequest, conflict, forbidden, tooLarge } from '../errors.js';
import type { Principal } from '../route.js';
import type { ServerKeys } from '../secrets.js';
import type {
  NodeRow,
  PublisherRow,
  RegistryStore,
  VersionPendingFields,
  VersionRow,
} from '../store/registry-store.js';
import { nodeChanges, sameId } from './nodes.js';

export interface PublishDeps {
  store: RegistryStore;
  keys: Pick<ServerKeys, 'upload'>;
  publicUrl(): string;
  options: { maxArchive: number };
}

type Body = z.output<typeof PublishBody>;

/** Who publishes, checked before the body (404, 403): the publisher, the caller's access, the node if it exists. */
export async function publishTarget(
  store: RegistryStore,
  principal: Principal | null,
  path: { publisherId: string; nodeId: string },
) {
  // A Deleted node of another publisher holds its id too, but reads hide it: refused before a missing
  // publisher is, so `publish --create-publisher` learns it before it creates one. Other nodes are
  // checked after the publisher, so a mistyped publisher id is reported as that, not as a taken node.
  const node = await store.getNode(path.nodeId);
  const takenBy = (held: NodeRow) => {
    // whose a Banned node is, only an admin reads (allowNodeRead)
    const holder = held.status === 'NodeStatusBanned' && !principal?.admin ? undefined : held.publisher_id;
    return forbidden(nodeIdTaken(held.id, holder), NODE_ID_TAKEN_HINT);
  };
  if (node?.status === 'NodeStatusDeleted' && node.publisher_id !== path.publisherId) throw takenBy(node);
  const publisher = await requirePublisher(store, path.publisherId);
  const access = await accessTo(store, principal, publisher.id);
  requireRole(access, 'member');
  if (principal?.kind === 'oidc' && principal.nodeId !== null && principal.nodeId !== path.nodeId)
    throw forbidden(
      `this publish token (exchanged for a CI job's OIDC token) publishes node ${principal.nodeId} only, not ${path.nodeId}`,
    );
  if (node && node.publisher_id !== publisher.id) throw takenBy(node);
  rejectBanned(access, publisher, node);
  return { publisher, access, node };
}

/** Publishes the version; returns it and the signed URL its archive is uploaded to. */
export async function publishVersion(
  deps: PublishDeps,
  principal: Principal,
  target: { publisher: PublisherRow; access: Access; node: NodeRow | undefined },
  nodeId: string,
  body: Body,
): Promise<{ version: VersionRow; signedUrl: string }> {
  const { publisher, access, node } = target;
  const pathId = nodeIdRule.safeParse(nodeId);
  if (!pathId.success) throw badRequest(`invalid node id "${nodeId}"`, fieldErrors(pathId.error.issues, 'nodeId'));
  sameId('node.id', body.node.id, nodeId);
  const v = body.node_version;
  // A declared archive over the limit is refused before anything is created.
  if (v.archive_size !== undefined && v.archive_size > deps.options.maxArchive) {
    throw tooLarge(archiveOverLimit(v.archive_size, deps.options.maxArchive), ARCHIVE_TOO_LARGE_HINT);
  }
  const declared =
    v.archive_size !== undefined && v.archive_sha256 !== undefined
      ? { size: v.archive_size, sha256: v.archive_sha256 }
      : undefined;
  const outcome = await deps.store.publish({
    publisherId: publisher.id,
    nodeId,
    node: nodeChanges(body.node, node, access.admin, false),
    // The display name defaults to the id when the node is created, never later.
    nodeDefaults: { name: nodeId },
    version: v.version,
    pending: Object.fromEntries(
      VERSION_PUBLISHED_FIELDS.map((field) => [field, v[field] ?? null]),
    ) as VersionPendingFields,
  });
  if (outcome.kind === 'other-publisher') throw forbidden(nodeIdTaken(nodeId, outcome.publisherId), NODE_ID_TAKEN_HINT);
  if (outcome.kind === 'look-alike') throw conflict(nodeIdLookalike(nodeId, outcome.nodeId), NODE_ID_TAKEN_HINT);
  if (outcome.kind === 'archive-exists') {
    throw conflict(
      `version ${v.version} of node ${outcome.version.node_id} already has an archive`,
      'publish a new version number',
    );
  }
  if (outcome.kind === 'status-locked') throw lockedVersion(outcome.version);
  // The URL names the token that published, so it stops working when that token is revoked.
  const signedUrl = signUploadUrl(
    deps.keys.upload,
    deps.publicUrl(),
    outcome.version.id,
    Date.now(),
    declared,
    principal.tokenId,
  );
  return { version: outcome.version, signedUrl };
}
