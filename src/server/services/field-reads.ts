// The reads the field's clients make (DESIGN.md §12) that the lists and node reads do not already
// serve: a list of named nodes, a version list filtered by status, and the bulk version lookup.
// Routes parse, call these, and render with views.ts.
import type { BulkVersionsAnswer, ComfyNode } from '../../contract/reads.js';
import type { NodeClassRow } from '../store/node-classes.js';
import type { VersionStatus } from '../store/registry-store.js';
import { readableNode } from '../access.js';
import { HttpError, notFound } from '../errors.js';
import type { Principal } from '../route.js';
import type { NodeRow, Page, RegistryStore, VersionRow } from '../store/registry-store.js';
import { versionView } from '../views.js';
import { findVersion } from './nodes.js';

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
      answers.push({
        identifier,
        status: 'success',
        node_version: versionView(version, node.publisher_id, publicUrl, access.member),
      });
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      answers.push(
        error.status === 404
          ? { identifier, status: 'not_found' }
          : { identifier, status: 'error', error_message: error.message },
      );
    }
  }
  return answers;
}

// ---------- node classes ----------

/** The most versions a class name is looked up in (a class many packs define, such as a copy of a common one). */
const DEFINERS_MAX = 1000;

/** A class as the wire shows it: the lists the host's frontend parses are JSON text, as the hosted registry sends them. */
export function classView({ definition }: NodeClassRow): ComfyNode {
  return {
    comfy_node_name: definition.name,
    display_name: definition.displayName,
    category: definition.category,
    description: definition.description,
    function: definition.function,
    deprecated: definition.deprecated,
    experimental: definition.experimental,
    output_node: definition.outputNode,
    input_types: JSON.stringify(definition.inputs),
    return_types: JSON.stringify(definition.returnTypes),
    return_names: JSON.stringify(definition.returnNames),
    output_is_list: definition.outputIsList,
  };
}

/** The classes of a version, as a read of that version allows (404 and 403 as it gives them). */
export async function versionClasses(
  store: RegistryStore,
  principal: Principal | null,
  nodeId: string,
  version: string,
): Promise<NodeClassRow[]> {
  const { node } = await readableNode(store, principal, nodeId);
  return store.listNodeClasses((await findVersion(store, node, version)).id);
}

/** The nodes that list (Active, their publisher not banned) among the nodes of these class rows, newest row first. */
async function listedNodesOf(store: RegistryStore, rows: NodeClassRow[]): Promise<NodeRow[]> {
  const page = await namedNodes(
    store,
    null,
    rows.map((row) => row.node_id),
    { includeBanned: false, offset: 0, limit: DEFINERS_MAX },
  );
  return page.rows;
}

/** The node whose newest Active version defines the class `name`; 404 when none does. */
export async function definingNode(store: RegistryStore, name: string): Promise<NodeRow> {
  const [node] = await listedNodesOf(store, await store.classDefiners(name, DEFINERS_MAX));
  if (!node) throw notFound(`no node defines the node class ${name}`);
  return node;
}

/** The listed nodes whose latest_version defines the class `name` (the packs that provide it today). */
export async function nodesDefining(
  store: RegistryStore,
  name: string,
  { offset, limit }: { offset: number; limit: number },
): Promise<Page<NodeRow>> {
  const definers = await store.classDefiners(name, DEFINERS_MAX);
  const defining = new Set(definers.map((row) => row.version_id));
  const nodes = await listedNodesOf(store, definers);
  const latest = await store.latestVersions(nodes.map((node) => node.id));
  const current = new Set(latest.filter((version) => defining.has(version.id)).map((version) => version.node_id));
  const rows = nodes.filter((node) => current.has(node.id));
  return { rows: rows.slice(offset, offset + limit), total: rows.length };
}
