// The operator's own operations (DESIGN.md §16, the [operate] issue). Admins only.
import * as z from 'zod';
import { GC_GRACE_MAX_SECONDS } from './limits.js';
import { op } from './operation.js';
import { AuditPage, DeleteUserQuery, TokenList, User, UserPage } from './resources.js';
import { pageLimit, pageNumber } from './resources/fields.js';

/**
 * Gives up the claim an upload holds on a version's archive: the way out when the instance that held it
 * died during the put, before the claim runs out. An object it left at the version's key goes too.
 */
export const releaseArchiveClaim = op({
  id: 'releaseArchiveClaim',
  method: 'DELETE',
  path: '/nodes/{nodeId}/versions/{version}/claim',
  summary: "Release the claim a dead upload left on a version's archive, so that it can be uploaded again (admins)",
  auth: 'user',
  status: 204,
});

/** Seven days: a deleted version's archive, or an orphaned object, is kept that long by default. */
export const GC_GRACE_DEFAULT_SECONDS = 7 * 24 * 3600;

export const GcBody = z.object({
  grace_seconds: z
    .number()
    .int()
    .min(0)
    .max(GC_GRACE_MAX_SECONDS)
    .default(GC_GRACE_DEFAULT_SECONDS)
    .describe('only what has been deleted (or stored, for an orphan) longer than this is removed'),
  dry_run: z.boolean().default(false).describe('list what would be removed, and remove nothing'),
});

export const GcAnswer = z.looseObject({
  dry_run: z.boolean(),
  /** Deleted before this time (ISO), or stored before it for an orphan: now less the grace. */
  before: z.string(),
  deleted_versions: z.array(z.looseObject({ node_id: z.string(), version: z.string(), key: z.string() })),
  orphans: z.array(z.looseObject({ key: z.string(), size: z.number().int(), modified_at: z.string() })),
});
export type GcAnswer = z.infer<typeof GcAnswer>;

/**
 * Removes the archives of versions Deleted longer than the grace period, and objects at an archive key
 * that no version refers to and older than it (uploads in flight are younger); `dry_run` lists them.
 */
export const collectArchives = op({
  id: 'collectArchives',
  method: 'POST',
  path: '/admin/gc',
  summary: "Remove deleted versions' archives and orphaned archive objects older than a grace period (admins)",
  auth: 'user',
  body: GcBody,
  response: GcAnswer,
});

// A user in a path ({user}) is named by id, e-mail or user name, as an owner names an invitee.
export const listUsers = op({
  id: 'listUsers',
  method: 'GET',
  path: '/users',
  summary: 'Every user but the deleted ones, oldest first (admins)',
  auth: 'user',
  query: z.object({ page: pageNumber, limit: pageLimit }),
  response: UserPage,
});
export const disableUser = op({
  id: 'disableUser',
  method: 'POST',
  path: '/users/{user}/disable',
  summary: 'Disable a user: their tokens are refused at once, on every instance (admins; never the last admin)',
  auth: 'user',
  response: User,
});
export const enableUser = op({
  id: 'enableUser',
  method: 'POST',
  path: '/users/{user}/enable',
  summary: 'Enable a disabled user: their tokens work again (admins)',
  auth: 'user',
  response: User,
});
export const deleteUser = op({
  id: 'deleteUser',
  method: 'DELETE',
  path: '/users/{user}',
  summary:
    'Delete a user: their memberships go to transfer_to or are removed, their tokens are revoked (admins; never the last admin, never the sole owner of a publisher without transfer_to)',
  auth: 'user',
  query: DeleteUserQuery,
  status: 204,
});
export const listTokensOfUser = op({
  id: 'listTokensOfUser',
  method: 'GET',
  path: '/users/{user}/tokens',
  summary: "A user's live tokens: user tokens and the publishers' access tokens they made (admins)",
  auth: 'user',
  response: TokenList,
});
export const revokeTokenOfUser = op({
  id: 'revokeTokenOfUser',
  method: 'DELETE',
  path: '/users/{user}/tokens/{tokenId}',
  summary: "Revoke one of a user's tokens (admins)",
  auth: 'user',
  status: 204,
});

/** The audit log, newest first: `action` (e.g. `user.disable`) and `target` (e.g. `user:ID`) filter it. */
export const listAudit = op({
  id: 'listAudit',
  method: 'GET',
  path: '/admin/audit',
  summary: 'The audit log of admin and owner actions, newest first (admins)',
  auth: 'user',
  query: z.object({
    page: pageNumber,
    limit: pageLimit,
    action: z.string().min(1).max(64).optional(),
    target: z.string().min(1).max(400).optional(),
  }),
  response: AuditPage,
});

export const adminOperations = [
  listAudit,
  releaseArchiveClaim,
  collectArchives,
  listUsers,
  disableUser,
  enableUser,
  deleteUser,
  listTokensOfUser,
  revokeTokenOfUser,
];
