// The mirror's cache limit (`--upstream-cache-max`): the kept archives never hold more bytes than it.
// Room for a new archive is made by removing the least recently used archives that are not pinned;
// pinned ones (synced on purpose, or installed in the last `--upstream-pin-days` days) are never
// removed, so when they alone leave no room the new archive is not kept. A removed archive keeps its
// sha256 pin: fetched again on its next download, other bytes are still refused.
import type { ArchiveStorage } from '../archives/storage.js';
import { mirroredArchiveKey, type ArchiveRecord, type MirrorCache, type MirrorEntry } from './cache.js';

interface Kept {
  entry: MirrorEntry;
  version: string;
  record: ArchiveRecord;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Whether an archive is pinned: synced on purpose, or downloaded within the last `pinDays` days. */
export function isPinned(record: ArchiveRecord, pinDays: number, at = Date.now()): boolean {
  return record.pinned === true || at - Date.parse(record.last_used) < pinDays * DAY_MS;
}

/** Every archive the cache holds now (not evicted). */
export async function keptArchives(cache: MirrorCache): Promise<Kept[]> {
  const kept: Kept[] = [];
  for (const id of await cache.ids()) {
    const entry = await cache.get(id);
    if (!entry) continue;
    for (const [version, record] of Object.entries(entry.archives))
      if (!record.evicted) kept.push({ entry, version, record });
  }
  return kept;
}

export interface CacheLimit {
  maxBytes: number;
  pinDays: number;
  log(line: string): void;
}

/**
 * Makes room for `size` more bytes within the limit, removing unpinned archives least recently used
 * first. False, with nothing removed, when the pinned archives alone leave no room.
 */
export async function makeRoom(
  cache: MirrorCache,
  archives: ArchiveStorage,
  limit: CacheLimit,
  size: number,
): Promise<boolean> {
  const kept = await keptArchives(cache);
  let total = kept.reduce((sum, archive) => sum + archive.record.size, 0) + size;
  if (total <= limit.maxBytes) return true;
  const candidates = kept
    .filter((archive) => !isPinned(archive.record, limit.pinDays))
    .sort((a, b) => a.record.last_used.localeCompare(b.record.last_used));
  const freeable = candidates.reduce((sum, archive) => sum + archive.record.size, 0);
  if (total - freeable > limit.maxBytes) return false;
  const changed = new Set<MirrorEntry>();
  for (const { entry, version, record } of candidates) {
    if (total <= limit.maxBytes) break;
    await archives.remove(mirroredArchiveKey(entry.id, version));
    record.evicted = true;
    total -= record.size;
    changed.add(entry);
    limit.log(
      `mirror: evicted ${entry.id} ${version} (${record.size} bytes, last used ${record.last_used}): the cache is at its limit of ${limit.maxBytes} bytes`,
    );
  }
  for (const entry of changed) await cache.put(entry);
  return true;
}
