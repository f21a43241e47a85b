// The mirror's cache limit (`--upstream-cache-max`): past it, the least recently used archives that are
// not pinned (synced on purpose) are removed, until the kept bytes fit. A removed archive keeps its
// sha256 pin: fetched again on its next download, other bytes are still refused.
import type { ArchiveStorage } from '../archives/storage.js';
import { mirroredArchiveKey, type ArchiveRecord, type MirrorCache, type MirrorEntry } from './cache.js';

interface Kept {
  entry: MirrorEntry;
  version: string;
  record: ArchiveRecord;
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

/** Removes unpinned archives, least recently used first, until the kept bytes are within `maxBytes`; never `spare`. */
export async function evictOver(
  cache: MirrorCache,
  archives: ArchiveStorage,
  maxBytes: number,
  spare: string,
  log: (line: string) => void,
): Promise<void> {
  const kept = await keptArchives(cache);
  let total = kept.reduce((sum, archive) => sum + archive.record.size, 0);
  if (total <= maxBytes) return;
  const candidates = kept
    .filter((archive) => !archive.record.pinned)
    .sort((a, b) => a.record.last_used.localeCompare(b.record.last_used));
  const changed = new Set<MirrorEntry>();
  for (const { entry, version, record } of candidates) {
    if (total <= maxBytes) break;
    const key = mirroredArchiveKey(entry.id, version);
    if (key === spare) continue;
    await archives.remove(key);
    record.evicted = true;
    total -= record.size;
    changed.add(entry);
    log(
      `mirror: evicted ${entry.id} ${version} (${record.size} bytes, last used ${record.last_used}): the cache is over ${maxBytes} bytes`,
    );
  }
  for (const entry of changed) await cache.put(entry);
}
