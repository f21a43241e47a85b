// The mirror's archives: each is fetched from upstream on its first download (one fetch per archive at
// a time), checked against the sha256 upstream declares, kept in the archive storage and pinned to
// the sha256 seen then. Other bytes later offered for the same version are refused and reported.
// With a cache limit, an archive that does not fit beside the pinned ones is not kept: a sync reports
// it, a download is served once from a scratch key removed after the answer.
import { randomUUID } from 'node:crypto';
import type { ArchiveStorage, OpenedArchive, ReceivedArchive } from '../archives/storage.js';
import type { MemoryBudget } from '../archives/validate-zip.js';
import { conflict, notFound } from '../errors.js';
import {
  mirroredArchiveKey,
  now,
  refuseChanged,
  SCRATCH_PREFIX,
  type ArchiveRecord,
  type MirrorCache,
  type MirrorEntry,
} from './cache.js';
import { asHttpError, UpstreamError, type Upstream, type UpstreamVersion } from './upstream.js';
import { makeRoom } from './eviction.js';
import { archiveRequirements } from './requirements.js';

interface ArchiveDeps {
  archives: ArchiveStorage;
  maxArchive: number;
  /** The server's budget of the bytes archives being received hold in memory. */
  uploadMemory: MemoryBudget;
  upstream: Upstream;
  cache: MirrorCache;
  findVersion(entry: MirrorEntry, asked: string): UpstreamVersion;
  /** Why the operator's policy holds a version back, if it does (with what its archive holds, once read). */
  heldBack(entry: MirrorEntry, version: UpstreamVersion): string | undefined;
  report(line: string): void;
  log(line: string): void;
  /** The kept cache only: an archive not kept is not fetched. */
  offline?: boolean;
  /** The most bytes of archives kept; unpinned ones past it are evicted, least recently used first. */
  cacheMaxBytes?: number;
  /** Days a downloaded archive stays pinned (default 7). */
  pinDays?: number;
}

const HOUR_MS = 60 * 60 * 1000;

/** Why an archive is opened: a sync keeps it or fails; a download is served either way. */
export type ArchivePurpose = 'download' | 'sync';

interface Fetched {
  record: ArchiveRecord;
  /** Where the bytes are; `scratch` when they were not kept and go once served. */
  key: string;
  scratch: boolean;
}

/** Upstream's bytes of a version, checked against the pin and the declared sha256. */
async function receive(deps: ArchiveDeps, entry: MirrorEntry, version: UpstreamVersion): Promise<ReceivedArchive> {
  const { archives, upstream, cache } = deps;
  const what = `${entry.id} ${version.version}`;
  const url = version.downloadUrl || (await upstream.install(entry.id, version.version)).downloadUrl || '';
  const received = await upstream.archive(url, what, (body) =>
    archives.receive(body, deps.maxArchive, deps.uploadMemory).catch((error: Error) => {
      throw new UpstreamError('bad_answer', `the upstream download of ${what} failed: ${error.message}`);
    }),
  );
  const pinned = entry.archives[version.version];
  const declared = version.archive_sha256;
  const changed = refuseChanged(entry, version.version, received.sha256, deps.report);
  if (changed || (!pinned && declared && declared !== received.sha256)) {
    await archives.discard(received);
    await cache.put(entry);
    if (!changed) deps.report(`sends bytes for ${what} that are not the sha256 it declares: refused`);
    throw new UpstreamError('bad_answer', `upstream offers other bytes for ${what} than expected: refused`);
  }
  return received;
}

/**
 * The version's record, made on its first fetch (its sha256 pinned), with the requirements.txt lines of
 * the bytes received. When those make the policy hold the version back, the bytes are dropped and the
 * version is absent from then on: a 404, as for any filtered version.
 */
async function recordOf(
  deps: ArchiveDeps,
  entry: MirrorEntry,
  version: UpstreamVersion,
  received: ReceivedArchive,
): Promise<ArchiveRecord> {
  const at = now();
  const record: ArchiveRecord = entry.archives[version.version] ?? {
    sha256: received.sha256,
    size: received.size,
    first_seen: at,
    last_used: at,
    evicted: true,
  };
  record.requirements = await archiveRequirements(received.tempPath).catch(() => []);
  entry.archives[version.version] = record;
  const held = deps.heldBack(entry, version);
  if (held) {
    await deps.archives.discard(received);
    await deps.cache.put(entry);
    deps.log(`mirror: ${entry.id} ${version.version} is held back once its archive was read: ${held}`);
    throw notFound(`version ${version.version} of node ${entry.id} not found`);
  }
  return record;
}

/** Keeps the bytes at `key` when the limit leaves room; else a download's go to a scratch key. */
async function store(deps: ArchiveDeps, received: ReceivedArchive, key: string, what: string, purpose: ArchivePurpose) {
  const { archives, cache } = deps;
  const max = deps.cacheMaxBytes;
  const limit = { maxBytes: max ?? 0, pinDays: deps.pinDays ?? 7, log: deps.log };
  const fits = max === undefined || (await makeRoom(cache, archives, limit, received.size));
  if (fits) {
    await archives.commit(received, key);
    return { key, scratch: false };
  }
  const full = `the mirror's cache is at its limit of ${max} bytes with pinned archives (synced, or installed in the last ${limit.pinDays} days)`;
  if (purpose === 'sync') {
    await archives.discard(received);
    throw conflict(`${what} is not kept: ${full}`, 'raise serve --upstream-cache-max, or sync fewer nodes');
  }
  deps.log(`mirror: ${what} is served without being kept: ${full}`);
  const scratch = `${SCRATCH_PREFIX}${randomUUID()}.zip`;
  await archives.commit(received, scratch);
  return { key: scratch, scratch: true };
}

export function createArchiveOpener(deps: ArchiveDeps) {
  const { archives, upstream, cache } = deps;
  const fetching = new Map<string, Promise<Fetched>>();
  // Room is made and filled one archive at a time, so two fetches never both count the same free bytes.
  let roomTurn: Promise<unknown> = Promise.resolve();

  function fetchOnce(entry: MirrorEntry, version: UpstreamVersion, key: string, purpose: ArchivePurpose) {
    const running = fetching.get(key);
    if (running) return running;
    const work = fetchArchive(entry, version, key, purpose).finally(() => fetching.delete(key));
    fetching.set(key, work);
    return work;
  }

  async function fetchArchive(entry: MirrorEntry, version: UpstreamVersion, key: string, purpose: ArchivePurpose) {
    const what = `${entry.id} ${version.version}`;
    try {
      const received = await receive(deps, entry, version);
      const record = await recordOf(deps, entry, version, received);
      const turn = roomTurn.then(() => store(deps, received, key, what, purpose));
      roomTurn = turn.catch(() => {});
      const stored = await turn;
      record.last_used = now();
      if (stored.scratch) record.evicted = true;
      else delete record.evicted;
      await cache.put(entry);
      return { record, ...stored };
    } catch (error) {
      throw asHttpError(error, entry.id, upstream.url);
    }
  }

  /** The archive of a version: the pinned one kept, else fetched from upstream, checked and kept. */
  return async function openArchive(
    entry: MirrorEntry,
    asked: string,
    purpose: ArchivePurpose = 'download',
  ): Promise<{ opened: OpenedArchive; sha256: string }> {
    const version = deps.findVersion(entry, asked);
    if (version.status !== undefined && version.status !== 'NodeVersionStatusActive')
      throw notFound(`no archive for version ${asked} of node ${entry.id}`);
    const key = mirroredArchiveKey(entry.id, version.version);
    const pinned = entry.archives[version.version];
    const kept = pinned && !pinned.evicted && (await archives.open(key));
    if (pinned && kept) {
      // the last download pins an archive for days, so it outlives a restart; written at most hourly
      const written = Date.parse(pinned.last_used);
      pinned.last_used = now();
      if (!(Date.now() - written < HOUR_MS)) void cache.put(entry).catch(() => {});
      return { opened: kept, sha256: pinned.sha256 };
    }
    if (deps.offline) throw notFound(`the archive of version ${version.version} of node ${entry.id} was not kept`);
    const fetched = await fetchOnce(entry, version, key, purpose);
    const opened = await archives.open(fetched.key);
    if (!opened) throw notFound(`the archive of version ${version.version} of node ${entry.id} is missing`);
    if (fetched.scratch) opened.stream.once('close', () => void archives.remove(fetched.key).catch(() => {}));
    return { opened, sha256: fetched.record.sha256 };
  };
}
