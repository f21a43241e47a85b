// What the mirror keeps of upstream: one JSON document per node (its answer, its versions, the sha256
// of each archive first fetched) and the archives, all in the registry's archive storage (the data dir
// or the bucket) under `_mirror/`, a prefix no publisher id can take. An index lists the nodes kept.
import type { ArchiveStorage } from '../archives/storage.js';
import type { UpstreamNode, UpstreamVersion } from './upstream.js';

/** An archive as first fetched: its bytes are pinned to this sha256 from then on (trust on first use). */
export interface ArchiveRecord {
  sha256: string;
  size: number;
  first_seen: string;
  last_used: string;
  /** Fetched on purpose (`mirror sync`): never evicted. */
  pinned?: boolean;
  /** The requirement lines of the archive's requirements.txt, read on its first fetch (the policy's advisory list checks them). */
  requirements?: string[];
  /** Removed to keep the cache within its limit: fetched again (and checked against the sha256) on its next download. */
  evicted?: boolean;
}

/** Upstream offering other bytes than the pinned ones: refused, kept for the operator. */
export interface RefusedArchive {
  version: string;
  pinned: string;
  offered: string;
  at: string;
}

export interface MirrorEntry {
  /** The node id as upstream spells it. */
  id: string;
  /** When the node and its versions were last read from upstream. */
  fetched_at: string;
  node: UpstreamNode;
  versions: UpstreamVersion[];
  archives: Record<string, ArchiveRecord>;
  refused: RefusedArchive[];
  /** The last refresh that failed, if the last one did. */
  failure?: { at: string; message: string };
}

/** Upstream's publisher of a node: the publisher segment of the mirror's download URLs. */
export const publisherOf = (entry: MirrorEntry) => entry.node.publisher?.id || 'upstream';

/** Refusals kept per node: the newest. */
const REFUSED_KEPT = 20;
const PREFIX = '_mirror';

export const now = () => new Date().toISOString();

/** Other bytes than the pinned ones, declared or fetched: reported once and kept for the operator. True when refused. */
export function refuseChanged(
  entry: MirrorEntry,
  version: string,
  offered: string | undefined,
  report: (line: string) => void,
): boolean {
  const pinned = entry.archives[version]?.sha256;
  if (!pinned || !offered || pinned === offered) return false;
  if (!entry.refused.some((r) => r.version === version && r.offered === offered)) {
    entry.refused.push({ version, pinned, offered, at: now() });
    report(
      `offers other bytes for ${entry.id} ${version} (sha256 ${offered}, pinned ${pinned}): refused, the pinned archive is served`,
    );
  }
  return true;
}

export const INDEX_KEY = `${PREFIX}/index.json`;
/** Where a download the full cache cannot keep waits while it is served, removed after (admin gc takes one left by a crash). */
export const SCRATCH_PREFIX = `${PREFIX}/scratch/`;

export const entryKey = (nodeId: string) => `${PREFIX}/nodes/${nodeId.toLowerCase()}.json`;
export const mirroredArchiveKey = (nodeId: string, version: string) =>
  `${PREFIX}/archives/${nodeId.toLowerCase()}/${version}/node.zip`;

async function readJson<T>(archives: ArchiveStorage, key: string): Promise<T | undefined> {
  const opened = await archives.open(key);
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.stream) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
}

export function createMirrorCache(archives: ArchiveStorage) {
  const entries = new Map<string, MirrorEntry>();
  let index: Promise<Set<string>> | undefined;
  // Writes of one key go in order: the last one written is the newest state.
  const writing = new Map<string, Promise<void>>();

  const write = (key: string, data: unknown) => {
    const previous = writing.get(key) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(() => archives.write(key, Buffer.from(JSON.stringify(data)), 'application/json'));
    writing.set(key, next);
    void next.finally(() => writing.get(key) === next && writing.delete(key)).catch(() => {});
    return next;
  };

  const ids = () =>
    (index ??= readJson<{ nodes: string[] }>(archives, INDEX_KEY).then((kept) => new Set(kept?.nodes ?? [])));

  return {
    /** The node kept under this id (any case), if any. */
    async get(nodeId: string): Promise<MirrorEntry | undefined> {
      const key = nodeId.toLowerCase();
      const kept = entries.get(key);
      if (kept) return kept;
      const read = await readJson<MirrorEntry>(archives, entryKey(nodeId));
      if (read) entries.set(key, read);
      return read;
    },

    /** Keeps the entry (the same object may be changed and put again). */
    async put(entry: MirrorEntry): Promise<void> {
      entry.refused = entry.refused.slice(-REFUSED_KEPT);
      entries.set(entry.id.toLowerCase(), entry);
      await write(entryKey(entry.id), entry);
      const known = await ids();
      if (!known.has(entry.id.toLowerCase())) {
        known.add(entry.id.toLowerCase());
        await write(INDEX_KEY, { nodes: [...known].sort() });
      }
    },

    /** The ids of every node kept, lowercase. */
    async ids(): Promise<string[]> {
      return [...(await ids())];
    },
  };
}

export type MirrorCache = ReturnType<typeof createMirrorCache>;
