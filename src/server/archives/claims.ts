import { STALE_CLAIM_MS, type RegistryStore } from '../store/registry-store.js';
import type { ArchiveStorage } from './storage.js';

/**
 * At start, before any request: rolls back every upload that died between claiming its version and
 * recording its archive (migration 'archive-claims'). None of them was acknowledged, so its file goes and the claim
 * with it; the version is left without an archive, and the upload can be retried. Returns how many.
 */
export async function rollBackArchiveClaims(
  store: RegistryStore,
  archives: ArchiveStorage,
  { shared = false } = {},
): Promise<number> {
  // A database other instances use may hold claims of uploads alive on them: only stale ones are dead.
  const cutoff = shared ? Date.now() - STALE_CLAIM_MS : Infinity;
  const claims = (await store.listArchiveClaims()).filter((claim) => Date.parse(claim.created_at) < cutoff);
  for (const claim of claims) {
    await archives.remove(claim.key);
    await store.releaseArchive(claim.version_id);
  }
  return claims.length;
}
