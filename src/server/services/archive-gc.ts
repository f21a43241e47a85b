// `nodereg admin gc` (DESIGN.md §16): the archives of versions Deleted longer than the grace period,
// and objects at an archive key that no version refers to (an upload's put whose version was never
// recorded), once older than the grace period, so that an upload in flight is never taken.
import { isPublisherId } from '../../contract/limits.js';
import type { GcAnswer } from '../../contract/admin.js';
import type { ArchiveStorage } from '../archives/storage.js';
import type { RegistryStore } from '../store/registry-store.js';
import { SCRATCH_PREFIX } from '../mirror/cache.js';
import { archiveKey } from '../views.js';

type Deps = { store: RegistryStore; archives: ArchiveStorage; log: (line: string, level?: 'warn' | 'error') => void };

/**
 * A registry archive's key (`{publisher}/{node}/{version}/node.zip`): the claim, the proxy's results
 * and the mirror's files start with `.` or `_`, which no publisher id does, so they are never taken.
 */
export const isArchiveKey = (key: string) => {
  const parts = key.split('/');
  return parts.length === 4 && parts[3] === 'node.zip' && isPublisherId(parts[0]);
};

/**
 * An object gc may take once no version refers to it: a registry archive's, or a mirror download's
 * scratch copy, which its answer removes when it ends and a crash mid-answer leaves behind.
 */
const isCollectable = (key: string) => isArchiveKey(key) || key.startsWith(SCRATCH_PREFIX);

/** What gc removes (or, with `dryRun`, would): Deleted versions' archives first, then orphans. */
export async function collectArchives(deps: Deps, input: { graceSeconds: number; dryRun: boolean }): Promise<GcAnswer> {
  const before = new Date(Date.now() - input.graceSeconds * 1000).toISOString();
  const versions = await deps.store.listArchivedVersions();
  const deleted = versions.filter((v) => v.status === 'NodeVersionStatusDeleted' && v.status_changed_at < before);
  const answer: GcAnswer = { dry_run: input.dryRun, before, deleted_versions: [], orphans: [] };
  for (const version of deleted) {
    const key = archiveKey(version.publisher_id, version.node_id, version.version);
    // The row first: once it no longer names the archive nothing serves it, and an object whose
    // removal failed is an orphan the next gc takes.
    if (!input.dryRun && !(await deps.store.dropDeletedArchive(version.id, before))) continue;
    if (!input.dryRun) await deps.archives.remove(key);
    answer.deleted_versions.push({ node_id: version.node_id, version: version.version, key });
  }
  const referenced = new Set(versions.map((v) => archiveKey(v.publisher_id, v.node_id, v.version)));
  const claimed = new Set((await deps.store.listArchiveClaims()).map((claim) => claim.key));
  for await (const object of deps.archives.list()) {
    if (!isCollectable(object.key) || referenced.has(object.key) || claimed.has(object.key)) continue;
    const modified = object.modified.toISOString();
    if (modified >= before) continue;
    if (!input.dryRun) await deps.archives.remove(object.key);
    answer.orphans.push({ key: object.key, size: object.size, modified_at: modified });
  }
  if (!input.dryRun)
    deps.log(
      `gc removed the archives of ${answer.deleted_versions.length} deleted versions and ${answer.orphans.length} orphaned objects older than ${before}`,
    );
  return answer;
}
