// Ignore files, scoped per directory: a stack of frames, the deeper deciding first.
import { readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import type { Ignore } from 'ignore';
import { ignore } from '../cjs.js';
import { hasGitEntry } from './git.js';

/** The patterns of one ignore file, scoped to the directory it sits in (`base`, relative to the root). */
export interface Frame {
  base: string;
  ig: Ignore;
  /** For a .gitignore above the root: the root's path from that file's directory, with a trailing `/`. */
  prefix?: string;
  /** A .comfyignore: the incumbent never applies it under an include. */
  comfy?: boolean;
}

export const newIgnore = () => ignore({ ignorecase: false, allowRelativePaths: true });

/**
 * Git matches patterns against bytes (`?` is one byte, so it does not match the two bytes of `é`);
 * `ignore` matches characters. Both patterns and paths are handed to it as UTF-8 bytes, one Latin-1
 * character each, so that the matching is git's.
 */
export const bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

/** Escapes a literal path for .gitignore syntax. */
function escapePattern(path: string): string {
  return path.replace(/[\\*?[\]!#]/g, '\\$&').replace(/ $/, '\\ ');
}

/** The path as seen from a frame's directory. */
const within = (frame: Frame, rel: string) =>
  frame.prefix !== undefined ? frame.prefix + rel : frame.base ? rel.slice(frame.base.length + 1) : rel;

/**
 * Git's decision for one path: the deepest ignore file with a matching pattern decides, and in it
 * the last matching pattern. Returns true when the path is ignored.
 */
export function ignoredBy(stack: Frame[], rel: string, isDir: boolean, skipComfy = false): boolean {
  for (let i = stack.length - 1; i >= 0; i--) {
    if (skipComfy && stack[i].comfy) continue;
    const local = within(stack[i], rel);
    const result = stack[i].ig.test(bytes(isDir ? `${local}/` : local));
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return false;
}

/**
 * The stack for the contents of directory `rel` (which is not excluded). `ignore` treats a path
 * under a directory its patterns exclude as excluded; but when a deeper file re-included that
 * directory, git tests its contents against each file's patterns on their own. So for each file that
 * excludes `rel`, a copy that re-includes exactly `rel` is used below it.
 */
export function stackFor(
  stack: Frame[],
  rel: string,
  dirAbs: string,
  names: string[],
  fileName: string,
  warnings: string[],
): Frame[] {
  const next = stack.map((frame) => {
    if (!rel || (frame.base && !rel.startsWith(`${frame.base}/`))) return frame;
    const local = within(frame, rel);
    if (!frame.ig.test(bytes(`${local}/`)).ignored) return frame;
    return {
      ...frame,
      ig: newIgnore()
        .add(frame.ig)
        .add(bytes(`!/${escapePattern(local)}/`)),
    };
  });
  // Only a file the listing holds is read: most directories have none, and a failed open costs an exception.
  const patterns = names.includes(fileName) ? readIgnoreFile(join(dirAbs, fileName), warnings) : undefined;
  if (patterns !== undefined)
    next.push({ base: rel, ig: newIgnore().add(patterns), comfy: fileName === '.comfyignore' || undefined });
  return next;
}

/** An ignore file's patterns, as bytes (see `bytes`). */
export function readIgnoreFile(file: string, warnings: string[]): string | undefined {
  try {
    return readFileSync(file, 'latin1').replace(/^\xef\xbb\xbf/, ''); // git skips a UTF-8 byte-order mark
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') warnings.push(`cannot read ${file}: ${(error as Error).message}`);
    return undefined;
  }
}

/**
 * The .gitignore files of the work tree's top and of each directory down to `rootReal`'s parent,
 * outermost first; none when they ignore the root and git tracks nothing in it: the project is not
 * part of that repository (a node of its own under ComfyUI/custom_nodes, not yet a repository).
 */
export function gitignoresAbove(rootReal: string, tracksSome: boolean, warnings: string[]): Frame[] {
  const above: string[] = [];
  let dir = rootReal;
  while (!hasGitEntry(dir)) {
    const parent = dirname(dir);
    if (parent === dir) return []; // no top found (GIT_DIR set, say): nothing to add
    dir = parent;
    above.unshift(dir);
  }
  const frames: Frame[] = [];
  for (const top of above) {
    const patterns = readIgnoreFile(join(top, '.gitignore'), warnings);
    if (patterns !== undefined)
      frames.push({ base: '', prefix: `${toArchivePath(top, rootReal)}/`, ig: newIgnore().add(patterns) });
  }
  for (let i = frames.length - 1; i >= 0 && !tracksSome; i--) {
    const result = frames[i].ig.test(bytes(frames[i].prefix!));
    if (result.ignored) return [];
    if (result.unignored) break;
  }
  return frames;
}

/** The path of `abs` relative to `root`, `/`-separated. */
export function toArchivePath(root: string, abs: string): string {
  return relative(root, abs).split(sep).join('/');
}
