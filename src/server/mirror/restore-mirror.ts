// What `nodereg restore` carries of a mirror's cache (mirror/cache.ts): the node documents and the
// index as they are, and each archive a document pins, checked against its sha256 as it is streamed.
// Files under _mirror/ that no document names are left behind.
import { createReadStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArchiveStorage } from '../archives/storage.js';
import type { MemoryBudget } from '../archives/validate-zip.js';
import { entryKey, mirroredArchiveKey, type MirrorEntry } from './cache.js';

const INDEX = '_mirror/index.json';

/** Copies the mirror's cache from a data dir's archives dir `root` into `storage`; what it copied. */
export async function copyMirrorCache(
  root: string,
  storage: ArchiveStorage,
  memory: MemoryBudget,
  say: (line: string) => void,
): Promise<{ files: number; bytes: number }> {
  const copied = { files: 0, bytes: 0 };
  const fileOf = (key: string) => join(root, ...key.split('/'));
  if (!existsSync(fileOf(INDEX))) return copied;
  const index = await readFile(fileOf(INDEX));
  const ids = (JSON.parse(index.toString('utf8')) as { nodes: string[] }).nodes;
  say(`copying the mirror's cache of ${ids.length} node${ids.length === 1 ? '' : 's'}…`);
  for (const id of ids) {
    const document = await readFile(fileOf(entryKey(id))).catch(() => undefined);
    if (!document) continue;
    const entry = JSON.parse(document.toString('utf8')) as MirrorEntry;
    for (const [version, record] of Object.entries(entry.archives)) {
      const file = fileOf(mirroredArchiveKey(entry.id, version));
      // an archive the cache no longer holds (evicted, lost) is fetched again on its next download
      if (!existsSync(file)) continue;
      const received = await storage.receive(createReadStream(file), Number.MAX_SAFE_INTEGER, memory);
      if (received.sha256 !== record.sha256) {
        await storage.discard(received);
        throw new Error(
          `the mirrored archive of ${entry.id} ${version} (${file}) has SHA-256 ${received.sha256}, but it is pinned to ${record.sha256}`,
        );
      }
      await storage.commit(received, mirroredArchiveKey(entry.id, version));
      copied.files++;
      copied.bytes += received.size;
    }
    await storage.write(entryKey(entry.id), document, 'application/json');
    copied.files++;
    copied.bytes += document.length;
  }
  await storage.write(INDEX, index, 'application/json');
  copied.files++;
  return copied;
}
