import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileProblem, invalidInput } from './errors.js';

/**
 * The file `--out` names for an archive called `name`: an existing directory, or a path ending in `/`
 * (made when missing, as `mkdir -p`), gets `name` in it, as cp does; anything else is the file itself.
 */
export function outFile(out: string | undefined, name: string): string {
  if (out === undefined) return name;
  if (/[\\/]$/.test(out)) makeDirectory(out);
  return isDirectory(out) ? join(out, name) : out;
}

/** Makes the directory `--out` names (and its parents), or says in plain words why it cannot. */
export function makeDirectory(path: string): void {
  try {
    mkdirSync(path, { recursive: true });
  } catch (error) {
    throw invalidInput(`cannot make the directory ${path}: ${fileProblem(error)}`, 'pass --out <file> in a writable directory');
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false; // not there, or not reachable: writing it says why, in words
  }
}
