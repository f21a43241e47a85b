// The objects of a local archive dir, as `ArchiveStorage.list` gives them (for `nodereg admin gc`).
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoredObject } from './storage.js';

/**
 * Every file under `dir` as a key (`a/b/c`), leaving out the dir `skip` at its root (the temporary
 * files of uploads) and the `.part` files of a write in progress beside its target.
 */
export async function* listLocalObjects(dir: string, skip: string, prefix = ''): AsyncGenerator<StoredObject> {
  let entries;
  try {
    entries = await readdir(join(dir, prefix), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const key = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (key !== skip) yield* listLocalObjects(dir, skip, key);
    } else if (entry.isFile() && !entry.name.endsWith('.part')) {
      const found = await stat(join(dir, key)).catch(() => undefined);
      if (found) yield { key, size: found.size, modified: found.mtime };
    }
  }
}
