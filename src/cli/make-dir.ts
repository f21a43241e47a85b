import { resolve, sep } from 'node:path';
import { MakeDirError, makeDirs } from '../shared/make-dirs.js';
import { invalidInput } from './errors.js';

/** The longest name of one file or directory most file systems take, in bytes (NAME_MAX). */
const NAME_MAX = 255;

/**
 * A path the user typed (`source`: the flag, argument or variable), checked before it is used, and
 * resolved. Refused, exit 2: a `~` the shell left as it is (it expands one only at the start of a word,
 * so `--out=~/x.zip` reaches us as is, and made a directory named `~`), a trailing backslash (part of
 * the name on Linux, not a separator: `dir\` was made as a directory of that name), and a name longer
 * than file systems take (which failed with a raw ENAMETOOLONG).
 */
export function userPath(path: string, source: string): string {
  if (/^~([\\/]|$)/.test(path)) {
    const instead = source.startsWith('-')
      ? `write \`${source} ~/…\` with a space, or $HOME/…`
      : `set ${source}=$HOME/…`;
    throw invalidInput(
      `${source}: ${path} starts with a ~ the shell did not expand (it does only at the start of an unquoted word, not after =)`,
      `${instead}; for a directory named ~, write ./~`,
    );
  }
  if (sep === '/' && path.endsWith('\\')) {
    throw invalidInput(
      `${source}: ${path} ends with a backslash, which is part of a name here, not a separator`,
      `write ${path.replace(/\\+$/, '')}/ for a directory`,
    );
  }
  const long = path.split(/[\\/]/).find((name) => Buffer.byteLength(name) > NAME_MAX);
  if (long !== undefined) {
    throw invalidInput(
      `${source}: the name ${long.slice(0, 40)}… is ${Buffer.byteLength(long)} bytes long; file systems take at most ${NAME_MAX} per name`,
      `choose a shorter name for ${source}`,
    );
  }
  return resolve(path);
}

/** Makes a directory the user named with `source` (a flag, an argument or a variable), or fails at once naming it: exit 2. */
export function makeUserDir(dir: string, source: string, mode?: number): void {
  try {
    makeDirs(dir, mode);
  } catch (error) {
    if (error instanceof MakeDirError)
      throw invalidInput(`${source}: ${error.message}`, `point ${source} at a directory you can write to`);
    throw error;
  }
}
