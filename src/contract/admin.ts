// The operator's own operations (DESIGN.md §16, the [operate] issue). Admins only.
import * as z from 'zod';
import { op } from './operation.js';

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

export const adminOperations = [releaseArchiveClaim, collectArchives];
