// What the operator does with the mirror (admins): read a kept node with the policy's verdict on each
// version, read the state of the whole cache, and sync a node (fetch, verify and pin its archives).
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { MirroredNode, MirrorStatus, SyncAnswer } from '../../contract/mirror.js';
import { HttpError } from '../errors.js';
import { publisherOf, type MirrorEntry } from './cache.js';
import { isPinned } from './eviction.js';
import { latestOf } from './reads.js';
import type { Mirror } from './service.js';
import type { RegistryStore } from '../store/registry-store.js';
import { asHttpError, UpstreamError, type UpstreamVersion } from './upstream.js';

type SyncedVersion = z.output<typeof SyncAnswer>['versions'][number];

/** A kept node as the admin reads it: every version, held back ones with the reason. */
export function describeEntry(mirror: Mirror, entry: MirrorEntry): z.output<typeof MirroredNode> {
  return {
    id: entry.id,
    publisher: publisherOf(entry),
    fetched_at: entry.fetched_at,
    ...(entry.failure ? { failure: entry.failure } : {}),
    versions: entry.versions.map((version) => {
      const held = mirror.heldBack(entry, version);
      const record = entry.archives[version.version];
      return {
        version: version.version,
        status: version.status,
        createdAt: version.createdAt,
        ...(held ? { held_back: held } : {}),
        ...(record ? { archive: { ...record, pinned: record.pinned === true } } : {}),
      };
    }),
    refused: entry.refused.map((refusal) => ({ ...refusal })),
  };
}

/** The whole cache: each kept node with its archives, bytes, last refresh and last failure. */
export async function mirrorStatus(mirror: Mirror): Promise<z.output<typeof MirrorStatus>> {
  const nodes: z.output<typeof MirrorStatus>['nodes'] = [];
  for (const id of (await mirror.cache.ids()).sort()) {
    const entry = await mirror.cache.get(id);
    if (!entry) continue;
    const records = Object.values(entry.archives).filter((record) => !record.evicted);
    nodes.push({
      id: entry.id,
      fetched_at: entry.fetched_at,
      archives: records.length,
      pinned: records.filter((record) => isPinned(record, mirror.options.pinDays ?? 7)).length,
      bytes: records.reduce((sum, record) => sum + record.size, 0),
      refused: entry.refused.length,
      ...(entry.failure ? { failure: `${entry.failure.at}: ${entry.failure.message}` } : {}),
    });
  }
  return {
    upstream: mirror.url,
    nodes,
    archives: nodes.reduce((sum, node) => sum + node.archives, 0),
    bytes: nodes.reduce((sum, node) => sum + node.bytes, 0),
  };
}

/** Reads a kept archive whole and says whether its bytes are the pinned ones. */
async function verified(mirror: Mirror, entry: MirrorEntry, version: string): Promise<SyncedVersion> {
  const { opened, sha256 } = await mirror.openArchive(entry, version, 'sync');
  const hash = createHash('sha256');
  for await (const chunk of opened.stream) hash.update(chunk as Buffer);
  const actual = hash.digest('hex');
  if (actual !== sha256)
    return { version, outcome: 'failed', reason: `the kept archive's sha256 is ${actual}, pinned ${sha256}` };
  return { version, outcome: 'fetched', sha256, size: entry.archives[version]?.size };
}

/** Fetches (when not kept), verifies and pins the archives of a node's latest or every active version. */
export async function syncNode(mirror: Mirror, nodeId: string, which: 'latest' | 'all') {
  const { entry } = await mirror.read(nodeId);
  const active = (v: UpstreamVersion) => v.status === undefined || v.status === 'NodeVersionStatusActive';
  const chosen =
    which === 'all' ? entry.versions.filter(active) : [latestOf(mirror, entry) ?? entry.versions.find(active)];
  const versions: SyncedVersion[] = [];
  for (const version of chosen) {
    if (!version) continue;
    const held = mirror.heldBack(entry, version);
    if (held) {
      versions.push({ version: version.version, outcome: 'held_back', reason: held });
      continue;
    }
    const kept = entry.archives[version.version] !== undefined;
    try {
      const result = await verified(mirror, entry, version.version);
      const record = entry.archives[version.version];
      if (record && result.outcome !== 'failed') record.pinned = true;
      versions.push(kept && result.outcome === 'fetched' ? { ...result, outcome: 'kept' } : result);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      // the policy may hold a version back once its archive is read (its requirements.txt)
      const heldNow = mirror.heldBack(entry, version);
      versions.push({
        version: version.version,
        outcome: heldNow ? 'held_back' : 'failed',
        reason: heldNow ?? error.message,
      });
    }
  }
  await mirror.cache.put(entry);
  return { id: entry.id, versions };
}

/**
 * A page of upstream's nodes (or of one upstream publisher's) for `mirror sync --all|--publisher`:
 * those whose id or publisher id this registry has are left out, as every read leaves them out.
 */
export async function upstreamNodes(
  mirror: Mirror,
  store: RegistryStore,
  publisher: string | undefined,
  page: number,
  limit: number,
) {
  let found: Awaited<ReturnType<Mirror['upstream']['nodePage']>>;
  try {
    found = await mirror.upstream.nodePage(publisher, page, limit);
  } catch (error) {
    if (error instanceof UpstreamError && error.kind === 'not_found')
      throw new HttpError('not_found', `publisher ${publisher} is not at the upstream registry ${mirror.url}`);
    throw asHttpError(error, '', mirror.url);
  }
  const nodes: { id: string; publisher: string }[] = [];
  for (const node of found.nodes) {
    const owner = node.publisher?.id || 'upstream';
    if ((await store.getNode(node.id)) || (await store.getPublisher(owner))) continue;
    nodes.push({ id: node.id, publisher: owner });
  }
  return { nodes, page, more: found.more };
}
