// Lists and search with a mirror (DESIGN.md §13): the registry's own nodes first, then the nodes kept
// from upstream that match, each marked `origin: "upstream"`. A kept node is left out when this
// registry holds its id or its publisher id (local names win), or when the policy lets none of its
// versions through. Only what the cache holds is listed: a list never waits for upstream.
import { searchTerms } from '../../contract/limits.js';
import type { Node } from '../../contract/resources.js';
import type { ServerContext } from '../context.js';
import { publisherOf, type MirrorEntry } from './cache.js';
import { latestOf, mirroredNode, mirrorOf } from './reads.js';

/** Which kept nodes a list shows. */
export type KeptMatch = (entry: MirrorEntry) => boolean;

/** A local page of a list: its nodes (already rendered) and how many match in all. */
interface LocalPage {
  nodes: Node[];
  total: number;
}

/** The words a kept node is found by: its id, name, description, author and tags. */
function wordsOf(entry: MirrorEntry): string[] {
  const { node } = entry;
  const text = [entry.id, node.name, node.description, node.author, ...(node.tags ?? [])].join(' ');
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A search's match over kept nodes: every term begins a word of the node (as local search matches). */
export function searchMatch(text: string): KeptMatch {
  const terms = searchTerms(text);
  if (!terms.length) return () => !text.trim();
  return (entry) => {
    const words = wordsOf(entry);
    return terms.every((term) => words.some((word) => word.startsWith(term)));
  };
}

/** A node_id filter's match over kept nodes. */
export function namedMatch(ids: readonly string[]): KeptMatch {
  const wanted = new Set(ids.map((id) => id.toLowerCase()));
  return (entry) => wanted.has(entry.id.toLowerCase());
}

/** The kept nodes a list may show, in id order: whether this registry holds their names is one query. */
async function listedEntries(ctx: ServerContext, match: KeptMatch): Promise<MirrorEntry[]> {
  const mirror = await mirrorOf(ctx);
  if (!mirror) return [];
  const candidates: MirrorEntry[] = [];
  for (const id of (await mirror.cache.ids()).sort()) {
    const entry = await mirror.cache.get(id);
    if (!entry || !match(entry)) continue;
    if (entry.node.status !== undefined && entry.node.status !== 'NodeStatusActive') continue;
    if (latestOf(mirror, entry)) candidates.push(entry);
  }
  if (!candidates.length) return [];
  const held = await ctx.store.heldNames({
    nodeIds: candidates.map((entry) => entry.id),
    publisherIds: [...new Set(candidates.map(publisherOf))],
  });
  const heldNodes = new Set(held.nodeIds);
  const heldPublishers = new Set(held.publisherIds);
  return candidates.filter((entry) => !heldNodes.has(entry.id) && !heldPublishers.has(publisherOf(entry)));
}

/**
 * A page of a list with the kept upstream nodes after the local ones: the page at `offset` takes the
 * local nodes the store gave, then fills up with kept nodes; the total counts both.
 */
export async function withKept(
  ctx: ServerContext,
  local: LocalPage,
  offset: number,
  limit: number,
  match: KeptMatch,
): Promise<LocalPage> {
  const kept = await listedEntries(ctx, match);
  if (!kept.length) return local;
  const mirror = (await mirrorOf(ctx))!;
  const start = Math.max(0, offset - local.total);
  const room = Math.max(0, limit - local.nodes.length);
  const shown = kept.slice(start, start + room).map((entry) => mirroredNode(mirror, entry, ctx.publicUrl()));
  return { nodes: [...local.nodes, ...shown], total: local.total + kept.length };
}
