// Node's mkdir({recursive: true}) retries forever, at full CPU, where mkdir answers ENOENT under a
// parent that exists (/proc, /sys): a user's path there must fail at once instead. Here, in shared/,
// because the server (its data dir, storage, restore) and the CLI (the dirs a user names) both make
// directories with it and say the same words when they cannot.
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** A directory that could not be made; the message says which part and why, in plain words. */
export class MakeDirError extends Error {
  constructor(
    readonly path: string,
    readonly code: string,
    why: string,
  ) {
    super(`cannot create the directory ${path}: ${why}`);
    this.name = 'MakeDirError';
  }
}

/**
 * Makes `dir` and its missing parents with plain mkdir, one at a time from the first existing
 * ancestor, and returns the first one it made (undefined when `dir` was there), as mkdir -p does.
 */
export function makeDirs(dir: string, mode?: number): string | undefined {
  const missing: string[] = [];
  let at = resolve(dir);
  for (;;) {
    let found;
    try {
      found = statSync(at, { throwIfNoEntry: false });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw failed(at, error);
    }
    if (found?.isDirectory()) break;
    if (found) throw new MakeDirError(at, 'ENOTDIR', `${at} is a file, not a directory`);
    missing.unshift(at);
    if (dirname(at) === at) break;
    at = dirname(at);
  }
  for (const path of missing) {
    try {
      mkdirSync(path, { mode });
    } catch (error) {
      // another process made it meanwhile
      if (
        (error as NodeJS.ErrnoException).code === 'EEXIST' &&
        statSync(path, { throwIfNoEntry: false })?.isDirectory()
      )
        continue;
      throw failed(path, error);
    }
  }
  return missing[0];
}

function failed(path: string, error: unknown): MakeDirError {
  const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
  const why: Record<string, string> = {
    ENOENT: `${dirname(path)} does not take new directories`,
    EACCES: `permission denied in ${dirname(path)}`,
    EPERM: `permission denied in ${dirname(path)}`,
    EROFS: `${dirname(path)} is on a read-only file system`,
    ENOSPC: 'the disk is full',
    ENAMETOOLONG: 'a name in it is longer than the file system takes (255 bytes), or the whole path is',
  };
  return new MakeDirError(path, code, why[code] ?? (error as Error).message);
}
