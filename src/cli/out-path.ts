import { statSync } from 'node:fs';
import { join } from 'node:path';
import { makeUserDir, userPath } from './make-dir.js';

/**
 * The file `--out` names for an archive called `name`: an existing directory, or a path ending in `/`
 * (made when missing, as `mkdir -p`), gets `name` in it, as cp does; anything else is the file itself.
 */
export function outFile(out: string | undefined, name: string): string {
  if (out === undefined) return name;
  userPath(out, '--out');
  if (/[\\/]$/.test(out)) makeUserDir(out, '--out');
  return isDirectory(out) ? join(out, name) : out;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false; // not there, or not reachable: writing it says why, in words
  }
}
