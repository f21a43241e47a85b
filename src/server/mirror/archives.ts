// The mirror's archives: each is fetched from upstream on its first download (one fetch per archive at
// a time), checked against the sha256 upstream declares, kept in the archive storage and pinned to
// the sha256 seen then. Other bytes later offered for the same version are refused and reported.
import type { ArchiveStorage, OpenedArchive } from '../archives/storage.js';
import { notFound } from '../errors.js';
import {
  mirroredArchiveKey,
  now,
  refuseChanged,
  type ArchiveRecord,
  type MirrorCache,
  type MirrorEntry,
} from './cache.js';
import { asHttpError, UpstreamError, type Upstream, type UpstreamVersion } from './upstream.js';

interface ArchiveDeps {
  archives: ArchiveStorage;
  maxArchive: number;
  upstream: Upstream;
  cache: MirrorCache;
  findVersion(entry: MirrorEntry, asked: string): UpstreamVersion;
  report(line: string): void;
  /** The kept cache only: an archive not kept is not fetched. */
  offline?: boolean;
}

export function createArchiveOpener(deps: ArchiveDeps) {
  const { archives, upstream, cache } = deps;
  const fetching = new Map<string, Promise<ArchiveRecord>>();

  function fetchOnce(entry: MirrorEntry, version: UpstreamVersion, key: string): Promise<ArchiveRecord> {
    const running = fetching.get(key);
    if (running) return running;
    const work = fetchArchive(entry, version, key).finally(() => fetching.delete(key));
    fetching.set(key, work);
    return work;
  }

  async function fetchArchive(entry: MirrorEntry, version: UpstreamVersion, key: string): Promise<ArchiveRecord> {
    const what = `${entry.id} ${version.version}`;
    try {
      const url = version.downloadUrl || (await upstream.install(entry.id, version.version)).downloadUrl || '';
      const received = await upstream.archive(url, what, (body) =>
        archives.receive(body, deps.maxArchive).catch((error: Error) => {
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
      await archives.commit(received, key);
      const record = pinned ?? { sha256: received.sha256, size: received.size, first_seen: now(), last_used: now() };
      record.last_used = now();
      entry.archives[version.version] = record;
      await cache.put(entry);
      return record;
    } catch (error) {
      throw asHttpError(error, entry.id, upstream.url);
    }
  }

  /** The archive of a version: the pinned one kept, else fetched from upstream, checked and kept. */
  return async function openArchive(
    entry: MirrorEntry,
    asked: string,
  ): Promise<{ opened: OpenedArchive; sha256: string }> {
    const version = deps.findVersion(entry, asked);
    if (version.status !== undefined && version.status !== 'NodeVersionStatusActive')
      throw notFound(`no archive for version ${asked} of node ${entry.id}`);
    const key = mirroredArchiveKey(entry.id, version.version);
    const pinned = entry.archives[version.version];
    const kept = pinned && (await archives.open(key));
    if (pinned && kept) {
      pinned.last_used = now();
      return { opened: kept, sha256: pinned.sha256 };
    }
    if (deps.offline) throw notFound(`the archive of version ${version.version} of node ${entry.id} was not kept`);
    const record = await fetchOnce(entry, version, key);
    const opened = await archives.open(key);
    if (!opened) throw notFound(`the archive of version ${version.version} of node ${entry.id} is missing`);
    return { opened, sha256: record.sha256 };
  };
}
