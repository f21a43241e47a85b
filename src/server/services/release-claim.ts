// `nodereg admin release-claim`: an upload's claim on a version's archive given up by hand, when the
// instance that held it died during the put and the version should not wait for the claim to run out.
import { normalizeVersion } from '../../contract/version.js';
import type { ArchiveStorage } from '../archives/storage.js';
import { conflict, notFound } from '../errors.js';
import type { RegistryStore, VersionRow } from '../store/registry-store.js';

/** Releases the claim on version `version` of node `nodeId`, and removes what the dead upload left at its key; answers the version. */
export async function releaseClaim(
  deps: { store: RegistryStore; archives: ArchiveStorage; log: (line: string, level?: 'warn' | 'error') => void },
  nodeId: string,
  version: string,
): Promise<VersionRow> {
  const node = await deps.store.getNode(nodeId);
  if (!node) throw notFound(`no node ${nodeId}`);
  const found = await deps.store.getVersion(node.id, normalizeVersion(version)?.version ?? version);
  if (!found) throw notFound(`node ${node.id} has no version ${version}`);
  if (found.archive_sha256 !== null)
    throw conflict(`version ${found.version} of node ${node.id} already has its archive: no upload holds it`);
  const claim = (await deps.store.listArchiveClaims()).find((c) => c.version_id === found.id);
  if (!claim) throw notFound(`no upload holds a claim on version ${found.version} of node ${node.id}`);
  // The object first: a claim released before it would let a new upload find it in the way.
  await deps.archives.remove(claim.key);
  await deps.store.releaseArchive(found.id);
  deps.log(`released the claim of an upload on ${node.id} ${found.version} (claimed ${claim.created_at}) by hand`);
  return found;
}
