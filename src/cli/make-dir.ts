import { MakeDirError, makeDirs } from '../server/make-dirs.js';
import { invalidInput } from './errors.js';

/** Makes a directory the user named with `source` (a flag, an argument or a variable), or fails at once naming it: exit 2. */
export function makeUserDir(dir: string, source: string, mode?: number): void {
  try {
    makeDirs(dir, mode);
  } catch (error) {
    if (error instanceof MakeDirError) throw invalidInput(`${source}: ${error.message}`, `point ${source} at a directory you can write to`);
    throw error;
  }
}
