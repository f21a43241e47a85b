// The mirror (DESIGN.md §13, the [mirror] issue): reads of nodes this registry does not hold, answered
// from the upstream registry and kept (mirror/cache.ts). A kept answer is refreshed after the TTL in
// the background: a read waits for the refresh at most `deadlineMs`, then gets the kept answer marked
// stale. An archive is fetched on its first download, pinned to the sha256 seen then, and never
// replaced by other bytes.
import type { ArchiveStorage } from '../archives/storage.js';
import type { MemoryBudget } from '../archives/validate-zip.js';
import { normalizeVersion } from '../../contract/version.js';
import { forbidden, HttpError, notFound } from '../errors.js';
import { createMirrorCache, now, publisherOf, refuseChanged, type MirrorEntry } from './cache.js';
import { createArchiveOpener } from './archives.js';
import { asHttpError, createUpstream, UpstreamError, type UpstreamVersion } from './upstream.js';
import { versionVerdict, type MirrorPolicy } from './policy.js';

export interface MirrorOptions {
  /** The upstream registry's base URL (`serve --upstream`). */
  url: string;
  /** How long a kept node answer is current, in ms (`--upstream-ttl`; default 10 minutes). */
  ttlMs?: number;
  /** How long a read with a kept answer waits for its refresh, in ms (default 1 s). */
  deadlineMs?: number;
  /** How long an upstream read may take, in ms (default 10 s). */
  timeoutMs?: number;
  /** How long an archive download from upstream may take, whole, in ms (default 10 minutes). */
  archiveTimeoutMs?: number;
  /** Upstream requests in flight at once (default 8). */
  concurrency?: number;
  /** Node ids a local publisher may publish although upstream holds them under another publisher. */
  allowIds?: string[];
  /** The operator's filter of upstream versions (`--upstream-policy`). */
  policy?: MirrorPolicy;
  /**
   * Serve the kept cache only, never asking upstream: a registry restored from a mirror's backup and
   * started without --upstream (an air-gapped copy).
   */
  offline?: boolean;
  /** The most bytes of archives the cache keeps (`--upstream-cache-max`); unpinned ones past it are evicted. */
  cacheMaxBytes?: number;
  /** Days an archive downloaded through the mirror stays pinned against eviction (`--upstream-pin-days`; default 7). */
  pinDays?: number;
}

export interface MirrorDeps {
  archives: ArchiveStorage;
  publicUrl(): string;
  maxArchive: number;
  /** The server's budget of the bytes archives being received hold in memory. */
  uploadMemory: MemoryBudget;
  log(line: string, level?: 'warn' | 'error'): void;
}

/** A node as the mirror answers it, and whether the answer is older than the TTL and could not be renewed. */
export interface MirrorRead {
  entry: MirrorEntry;
  stale: boolean;
}

/** The header that marks an answer kept from upstream and not renewed in time: its value is when it was read. */
export const STALE_HEADER = 'X-Nodereg-Stale';
/** The header that marks an answer of the mirror. */
export const ORIGIN_HEADER = 'X-Nodereg-Origin';

const versionOf = (text: string) => normalizeVersion(text)?.version;

/** Settles with the promise's value, or undefined once `ms` have passed first (or it rejects). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}

export function createMirror(deps: MirrorDeps, options: MirrorOptions) {
  const upstream = createUpstream({
    url: options.url,
    timeoutMs: options.timeoutMs ?? 10_000,
    archiveTimeoutMs: options.archiveTimeoutMs ?? 10 * 60_000,
    concurrency: options.concurrency ?? 8,
  });
  const ttlMs = options.ttlMs ?? 10 * 60_000;
  const deadlineMs = options.deadlineMs ?? 1000;
  const cache = createMirrorCache(deps.archives);
  const refreshing = new Map<string, Promise<MirrorEntry>>();
  const report = (line: string) => deps.log(`mirror: upstream ${upstream.url} ${line}`, 'warn');

  /** Reads the node and its versions from upstream into its entry (one read per node at a time). */
  function refresh(nodeId: string, kept: MirrorEntry | undefined): Promise<MirrorEntry> {
    const key = nodeId.toLowerCase();
    const running = refreshing.get(key);
    if (running) return running;
    const work = readUpstream(nodeId, kept).finally(() => refreshing.delete(key));
    refreshing.set(key, work);
    return work;
  }

  async function readUpstream(nodeId: string, kept: MirrorEntry | undefined): Promise<MirrorEntry> {
    try {
      const [node, listed] = await Promise.all([upstream.node(nodeId), upstream.versions(nodeId)]);
      if (node.id.toLowerCase() !== nodeId.toLowerCase())
        throw new UpstreamError('bad_answer', `the upstream registry answered node ${node.id} for ${nodeId}`);
      const versions: UpstreamVersion[] = [];
      for (const version of listed) {
        const normal = versionOf(version.version);
        if (normal) versions.push({ ...version, version: normal });
      }
      const entry: MirrorEntry = kept ?? { id: node.id, fetched_at: '', node, versions, archives: {}, refused: [] };
      Object.assign(entry, { node, versions, fetched_at: now(), failure: undefined });
      for (const version of versions) refuseChanged(entry, version.version, version.archive_sha256, report);
      await cache.put(entry);
      return entry;
    } catch (error) {
      if (kept) kept.failure = { at: now(), message: (error as Error).message };
      throw error;
    }
  }

  /** The node's entry: kept and current, else renewed within the deadline, else kept and stale; else read from upstream. */
  async function read(nodeId: string): Promise<MirrorRead> {
    const kept = await cache.get(nodeId);
    if (options.offline) {
      if (!kept) throw notFound(`node ${nodeId} not found`);
      return { entry: kept, stale: false };
    }
    if (!kept) {
      try {
        return { entry: await refresh(nodeId, undefined), stale: false };
      } catch (error) {
        throw asHttpError(error, nodeId, upstream.url);
      }
    }
    if (Date.now() - Date.parse(kept.fetched_at) < ttlMs) return { entry: kept, stale: false };
    const renewed = refresh(nodeId, kept);
    renewed.catch((error: Error) => deps.log(`mirror: refresh of ${kept.id} failed: ${error.message}`, 'warn'));
    const fresh = await within(renewed, deadlineMs);
    return fresh ? { entry: fresh, stale: false } : { entry: kept, stale: true };
  }

  /** Why the operator's policy holds a version back, if it does. */
  const heldBack = (entry: MirrorEntry, version: UpstreamVersion) =>
    options.policy ? versionVerdict(options.policy, entry, version) : undefined;

  /** The versions a client sees: those the policy lets through. */
  const visibleVersions = (entry: MirrorEntry) => entry.versions.filter((version) => !heldBack(entry, version));

  function findVersion(entry: MirrorEntry, asked: string): UpstreamVersion {
    const wanted = versionOf(asked) ?? asked;
    const version = visibleVersions(entry).find((v) => v.version === wanted);
    if (!version) throw notFound(`version ${asked} of node ${entry.id} not found`);
    return version;
  }

  const openArchive = createArchiveOpener({ ...deps, ...options, upstream, cache, findVersion, heldBack, report });
  return {
    url: upstream.url,
    read,
    cache,
    heldBack,
    visibleVersions,
    findVersion,
    openArchive,
    log: deps.log,
    upstream,
    options,
  };
}

export type Mirror = ReturnType<typeof createMirror>;

/**
 * A local publish of a new node id: refused (403) when upstream holds that id under another
 * publisher, unless the operator allows the id (`--upstream-allow`). Upstream out of reach with
 * nothing kept: allowed, and logged.
 */
export async function checkLocalPublish(mirror: Mirror, nodeId: string, publisherId: string): Promise<void> {
  if (mirror.options.allowIds?.some((id) => id.toLowerCase() === nodeId.toLowerCase())) return;
  let holder: string | undefined;
  try {
    holder = publisherOf((await mirror.read(nodeId)).entry);
  } catch (error) {
    if (error instanceof HttpError && error.status === 404) return;
    mirror.log(`mirror: could not ask ${mirror.url} whether it holds ${nodeId}; its local publish goes ahead`, 'warn');
    return;
  }
  if (holder !== publisherId)
    throw forbidden(
      `node id ${nodeId} belongs to publisher ${holder} at the upstream registry ${mirror.url}: a local node of that id would stand in for it`,
      `pick another node id, or the registry's operator lets it through with serve --upstream-allow ${nodeId}`,
    );
}
