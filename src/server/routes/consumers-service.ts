// The reads the field's clients make (DESIGN.md §12) that the lists and node reads do not already
// serve: a list of named nodes, a version list filtered by status, and the bulk version lookup.
// Routes parse, call these, and render with views.ts.
import type { BulkVersionsAnswer } from '../../contract/reads.js';
import type { VersionStatus } from '../store/registry-store.js';
import { readableNode } from '../access.js';
import { HttpError } from '../errors.js';
import type { Principal } from '../route.js';
import type { NodeRow, Page, RegistryStore, VersionRow } from '../store/registry-store.js';
import { versionView } from '../views.js';
import { findVersion } from '../services/nodes.js';

/**
 * The nodes named by `ids` that a catalogue lists: Active ones of publishers not banned; with
 * `includeBanned`, an admin also gets Banned ones. In the order named, a page of them.
 */
export async function namedNodes(
  store: RegistryStore,
  principal: Principal | null,
  ids: readonly string[],
  { includeBanned, offset, limit }: { includeBanned: boolean; offset: number; limit: number },
): Promise<Page<NodeRow>> {
  const admin = principal?.admin === true;
  const listed: NodeRow[] = [];
  for (const id of new Set(ids)) {
    const node = await store.getNode(id);
    if (!node || listed.some((seen) => seen.id === node.id)) continue;
    const shown = node.status === 'NodeStatusActive' || (admin && includeBanned && node.status === 'NodeStatusBanned');
    if (!shown) continue;
    const publisher = await store.getPublisher(node.publisher_id);
    if (publisher?.status === 'PublisherStatusBanned' && !(admin && includeBanned)) continue;
    listed.push(node);
  }
  return { rows: listed.slice(offset, offset + limit), total: listed.length };
}

/** A node's versions with one of `statuses` (all of them when none is given). */
export function withStatuses(versions: VersionRow[], statuses: readonly VersionStatus[] | undefined): VersionRow[] {
  return statuses?.length ? versions.filter((version) => statuses.includes(version.status)) : versions;
}

type BulkItem = BulkVersionsAnswer['node_versions'][number];

/**
 * Each asked version as a read of it answers it, in order: `not_found` where that read is 404,
 * `error` with its message where it is refused otherwise (a banned node), `success` with the version.
 */
export async function bulkVersions(
  store: RegistryStore,
  principal: Principal | null,
  asked: readonly { node_id: string; version: string }[],
  publicUrl: string,
): Promise<BulkItem[]> {
  const answers: BulkItem[] = [];
  for (const identifier of asked) {
    try {
      const { node, access } = await readableNode(store, principal, identifier.node_id);
      const version = await findVersion(store, node, identifier.version);
      answers.push({ identifier, status: 'success', node_version: versionView(version, node.publisher_id, publicUrl, access.member) });
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      answers.push(error.status === 404 ? { identifier, status: 'not_found' } : { identifier, status: 'error', error_message: error.message });
    }
  }
  return answers;
}
