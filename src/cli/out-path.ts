import { statSync } from 'node:fs';
import { join } from 'node:path';
import { invalidInput } from './errors.js';
import { makeUserDir, userPath } from './make-dir.js';

/** `--out -` is refused before any work, in words, rather than written to a file named `-`: archives go to files. */
export function refuseStdoutOut(out: string | undefined): void {
  if (out === '-')
    throw invalidInput(
      '--out - (stdout) is not supported: --out names a file or directory for the archive',
      'pass --out ./-   for a file named "-"',
    );
}

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

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false; // not there, or not reachable: writing it says why, in words
  }
}
