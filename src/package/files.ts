// The file set of DESIGN.md §6. In a git work tree, the files git tracks are always in; outside git,
// and for untracked files, every file not ignored by the nested .gitignore files (git's semantics).
// .noderegignore and .comfyignore files and `excludes` remove files, tracked or not; the `includes`
// are forced in. The `ignore` package matches one file's patterns; the scoping per directory, the
// precedence of deeper files and the rule that nothing under an excluded directory comes back are ours.
import { spawnSync } from 'node:child_process';
import { createEntryNameChecker, entryNameProblem } from '../contract/archive-names.js';
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Ignore } from 'ignore';
import { ignore } from './cjs.js';
import type { Problem } from './manifest.js';

export interface SelectedFile {
  /** The name in the archive: relative to the root, `/`-separated, exactly as on disk. */
  path: string;
  /** Where to read it (a symlink is read through). */
  abs: string;
  size: number;
  /** 0o644, or 0o755 for executables. */
  mode: number;
  /** In a git work tree, a file git does not track (it ships, but is not committed). */
  untracked?: boolean;
  /** An untracked file that `includes` brings in (built assets, gitignored on purpose). */
  included?: boolean;
}

export interface FileSet {
  files: SelectedFile[];
  warnings: string[];
  problems: Problem[];
}

export interface SelectOptions {
  /** `[tool.nodereg] includes`: paths (files or directories) forced in even if gitignored. */
  includes?: string[];
  /** The key `includes` came from, to name it in problems. */
  includesKey?: string;
  /** `[tool.nodereg] excludes`: patterns with .gitignore syntax, relative to the root. */
  excludes?: string[];
  /** Absolute paths never to include (the pack's own output). */
  skip?: string[];
  /** With a node id, files named like an earlier pack of it (`<id>-1.2.3.zip`) are left out, anywhere. */
  nodeId?: string;
  /** Called with each file as the walk finds it (the packer starts on them while the walk goes on). */
  onFile?: (file: SelectedFile) => void;
}

/** What git tracks under the root: the files, and every directory holding one; and what it lists as untracked. */
interface Tracked {
  files: Set<string>;
  dirs: Set<string>;
  /** `git ls-files --others --exclude-standard`: untracked files not ignored, nested repositories as `dir/`. */
  others: string[];
}

/** A line of `git ls-files -s`: mode, object, stage, then the path. */
const STAGED = /^(\d{6}) [0-9a-f]+ \d\t/;

/**
 * The files git tracks under `root` (relative to it), or undefined outside a git work tree. Files of
 * checked-out submodules count as tracked, as their contents ship.
 */
function trackedFiles(root: string, warnings: string[], problems: Problem[]): Tracked | undefined {
  // Tracked (with their modes) and untracked in one listing: git takes --recurse-submodules with
  // --cached alone, so a submodule (a gitlink, mode 160000) is listed again below, for its files.
  const run = spawnSync('git', ['ls-files', '-z', '--stage', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'buffer', maxBuffer: 1 << 30 });
  if (run.error) {
    // No git at all: the ignore files are all there is to go by.
    if (hasGitEntry(root)) warnings.push(`git could not list the tracked files (${run.error.message}); the file set follows the ignore files only`);
    return undefined;
  }
  if (run.status !== 0) {
    const said = run.stderr.toString('utf8').trim();
    // Outside a work tree is the ordinary case. The project's own repository refused (owned by another
    // user, a broken index) would lose its committed files that .gitignore matches, and pack other
    // bytes. One above it (ComfyUI's, around a node not yet a repository) may not hold the node at all.
    // A `.git` that is no repository (an empty directory, a submodule's `.git` file copied out) holds
    // no committed file to lose: the ignore files go, as outside any repository.
    const noRepository = /not a git repository/i.test(said.split('\n')[0]);
    if (hasGitEntry(root) && !noRepository) {
      problems.push({ key: 'files', message: `git could not list the tracked files, so a committed file that .gitignore matches would be left out; fix what git says: ${said.split(/\s*\n\s*/).join(' ')}` });
    } else if (hasGitEntry(root)) {
      warnings.push(`${join(root, '.git')} is not a git repository (${said.split('\n')[0]}); the file set follows the ignore files only`);
    } else if (!noRepository) {
      warnings.push(`git could not list the tracked files (${said.split('\n')[0]}); the file set follows the ignore files only`);
    }
    return undefined;
  }
  let files = new Set<string>();
  const others: string[] = [];
  let submodules = false;
  for (const line of run.stdout.toString('utf8').split('\0')) {
    const staged = STAGED.exec(line);
    if (staged) {
      files.add(line.slice(staged[0].length));
      if (staged[1] === '160000') submodules = true;
    } else if (line) others.push(line);
  }
  if (submodules) {
    const withSubmodules = spawnSync('git', ['ls-files', '-z', '--cached', '--recurse-submodules'], { cwd: root, encoding: 'buffer', maxBuffer: 1 << 30 });
    if (!withSubmodules.error && withSubmodules.status === 0) files = new Set(withSubmodules.stdout.toString('utf8').split('\0').filter(Boolean));
  }
  const dirs = new Set<string>();
  for (const file of files) {
    for (let at = file.lastIndexOf('/'); at > 0; at = file.lastIndexOf('/', at - 1)) {
      const dir = file.slice(0, at);
      if (dirs.has(dir)) break;
      dirs.add(dir);
    }
  }
  return { files, dirs, others };
}

/** An earlier pack of this node, by its name: `<id>-<version>.zip`. */
const PACK_NAME = /^(.+)-\d+\.\d+\.\d+[0-9A-Za-z.+-]*\.zip$/;

/** Never packed, whatever the ignore files say. */
const ALWAYS_EXCLUDED = new Set(['.git', '.hg', '.svn', '.bzr', '_darcs', 'CVS', '__pycache__', '.venv', 'node_modules']);
const alwaysExcluded = (name: string, isDir: boolean) => ALWAYS_EXCLUDED.has(name) || (!isDir && name.endsWith('.pyc'));

/** The patterns of one ignore file, scoped to the directory it sits in (`base`, relative to the root). */
interface Frame {
  base: string;
  ig: Ignore;
  /** For a .gitignore above the root: the root's path from that file's directory, with a trailing `/`. */
  prefix?: string;
  /** A .comfyignore: the incumbent never applies it under an include. */
  comfy?: boolean;
}

const newIgnore = () => ignore({ ignorecase: false, allowRelativePaths: true });

/**
 * Git matches patterns against bytes (`?` is one byte, so it does not match the two bytes of `é`);
 * `ignore` matches characters. Both patterns and paths are handed to it as UTF-8 bytes, one Latin-1
 * character each, so that the matching is git's.
 */
const bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

/** Archive names sort by the bytes of their UTF-8 form, so every machine orders them alike. */
export function compareUtf8(a: string, b: string): number {
  // UTF-16 units below the surrogates order as UTF-8 bytes do; only past them are the bytes compared.
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 && y < 0xd800) return x < y ? -1 : 1;
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Escapes a literal path for .gitignore syntax. */
function escapePattern(path: string): string {
  return path.replace(/[\\*?[\]!#]/g, '\\$&').replace(/ $/, '\\ ');
}

/** The path as seen from a frame's directory. */
const within = (frame: Frame, rel: string) => (frame.prefix !== undefined ? frame.prefix + rel : frame.base ? rel.slice(frame.base.length + 1) : rel);

/**
 * Git's decision for one path: the deepest ignore file with a matching pattern decides, and in it
 * the last matching pattern. Returns true when the path is ignored.
 */
function ignoredBy(stack: Frame[], rel: string, isDir: boolean, skipComfy = false): boolean {
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
function stackFor(stack: Frame[], rel: string, dirAbs: string, names: string[], fileName: string, warnings: string[]): Frame[] {
  const next = stack.map((frame) => {
    if (!rel || (frame.base && !rel.startsWith(`${frame.base}/`))) return frame;
    const local = within(frame, rel);
    if (!frame.ig.test(bytes(`${local}/`)).ignored) return frame;
    return { ...frame, ig: newIgnore().add(frame.ig).add(bytes(`!/${escapePattern(local)}/`)) };
  });
  // Only a file the listing holds is read: most directories have none, and a failed open costs an exception.
  const patterns = names.includes(fileName) ? readIgnoreFile(join(dirAbs, fileName), warnings) : undefined;
  if (patterns !== undefined) next.push({ base: rel, ig: newIgnore().add(patterns), comfy: fileName === '.comfyignore' || undefined });
  return next;
}

/** An ignore file's patterns, as bytes (see `bytes`). */
function readIgnoreFile(file: string, warnings: string[]): string | undefined {
  try {
    return readFileSync(file, 'latin1').replace(/^\xef\xbb\xbf/, ''); // git skips a UTF-8 byte-order mark
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') warnings.push(`cannot read ${file}: ${(error as Error).message}`);
    return undefined;
  }
}

/** Cleans an `includes` entry: relative to the root (a leading `/` means the root, as the incumbent reads it), `/`-separated, no `..`. */
function normaliseInclude(entry: string): string | undefined {
  const cleaned = entry.replace(/\\/g, '/').replace(/^(\.?\/)+/, '').replace(/\/+$/, '');
  if (!cleaned || cleaned.split('/').includes('..')) return undefined;
  return cleaned;
}

/** Lists the files to pack under `root`, sorted by UTF-8 bytes. Problems and warnings are collected. */
export function selectFiles(root: string, options: SelectOptions = {}): FileSet {
  const warnings: string[] = [];
  const problems: Problem[] = [];
  const files: SelectedFile[] = [];
  const rootAbs = resolve(root);
  const rootReal = realpathSync(rootAbs);
  const skip = new Set((options.skip ?? []).map((p) => resolve(p)));
  const includesKey = options.includesKey ?? '[tool.nodereg] includes';

  const includes: string[] = [];
  for (const entry of options.includes ?? []) {
    const cleaned = normaliseInclude(entry);
    if (cleaned === undefined) problems.push({ key: includesKey, message: `"${entry}" must be a path inside the project` });
    else includes.push(cleaned);
  }
  const tracked = trackedFiles(rootAbs, warnings, problems);
  const seenIncludes = new Set<string>();
  const forced = (rel: string) => includes.find((inc) => rel === inc || rel.startsWith(`${inc}/`));
  /** A directory that leads to something in whatever ignore files say: an include, or a tracked file. */
  const leadsToInclude = (rel: string) => includes.some((inc) => inc.startsWith(`${rel}/`));
  const leadsToPinned = (rel: string) => leadsToInclude(rel) || tracked?.dirs.has(rel) === true;
  /** Never packed: the incumbent's `node.zip` at the root, and earlier packs of this node anywhere. */
  const earlierArchive = (rel: string, name: string) => rel === 'node.zip' || (options.nodeId !== undefined && PACK_NAME.exec(name)?.[1] === options.nodeId);

  const listDir = (dirAbs: string, rel: string): string[] | undefined => {
    try {
      return readdirSync(dirAbs);
    } catch (error) {
      warnings.push(`cannot read directory ${rel || '.'}: ${(error as Error).message}`);
      return undefined;
    }
  };
  const rootNames = listDir(rootAbs, '') ?? [];
  const rootNodereg = newIgnore();
  const rootNoderegFile = rootNames.includes('.noderegignore') ? readIgnoreFile(join(rootAbs, '.noderegignore'), warnings) : undefined;
  if (rootNoderegFile !== undefined) rootNodereg.add(rootNoderegFile);
  rootNodereg.add((options.excludes ?? []).map(bytes));
  const rootStack = stackFor([], '', rootAbs, rootNames, '.comfyignore', warnings);
  // Without patterns it decides nothing, and testing every path against it costs ~10% of the listing.
  if (rootNoderegFile !== undefined || options.excludes?.length) rootStack.push({ base: '', ig: rootNodereg });

  /**
   * `git`: the .gitignore stack, or null inside a forced include (gitignore does not apply).
   * `nodereg`: the .comfyignore and .noderegignore stack (excludes at the root).
   * `toward`: inside a gitignored directory, walking only to reach an include or a tracked file.
   * `towardInclude`: inside a directory .comfyignore leaves out, walking only to reach an include.
   */
  const walk = (
    dirAbs: string, rel: string, names: string[], git: Frame[] | null, nodereg: Frame[], toward: boolean, towardInclude: boolean, ancestors: Set<string>,
  ) => {
    for (const name of names) {
      const childRel = rel ? `${rel}/${name}` : name;
      const childAbs = join(dirAbs, name);
      let stats: Stats;
      let real: string | undefined;
      try {
        stats = lstatSync(childAbs);
        if (stats.isSymbolicLink()) {
          real = realpathSync(childAbs);
          if (real !== rootReal && !real.startsWith(rootReal + sep)) {
            warnings.push(`${childRel} is a symlink that leads out of the project; skipped`);
            continue;
          }
          stats = statSync(childAbs);
        }
      } catch (error) {
        const broken = (error as NodeJS.ErrnoException).code === 'ENOENT';
        // A name that is not UTF-8 was listed with U+FFFD in it, so no file answers to it.
        if (broken && name.includes('\ufffd')) warnings.push(`${childRel}: its name is not valid UTF-8, which an archive name must be; skipped (rename it)`);
        else warnings.push(broken ? `${childRel} is a broken symlink; skipped` : `cannot read ${childRel}: ${(error as Error).message}`);
        continue;
      }
      const isDir = stats.isDirectory();
      if (!isDir && !stats.isFile()) {
        warnings.push(`${childRel} is not a regular file; skipped`);
        continue;
      }
      if (alwaysExcluded(name, isDir)) continue;
      const include = forced(childRel);
      // .comfyignore leaves nothing out of an include, as the incumbent reads it; .noderegignore and excludes do.
      let childTowardInclude = false;
      if (include) {
        if (ignoredBy(nodereg, childRel, isDir, true)) continue;
      } else if (towardInclude || ignoredBy(nodereg, childRel, isDir)) {
        const reachesInclude = isDir && leadsToInclude(childRel) && !ignoredBy(nodereg, childRel, isDir, true);
        if (!reachesInclude) continue;
        childTowardInclude = true;
      }
      // git never ignores a file it tracks.
      const trackedFile = !isDir && tracked?.files.has(childRel) === true;
      const pinned = include !== undefined || trackedFile;

      let childGit = git;
      let childToward = false;
      if (toward && !pinned) {
        if (!(isDir && leadsToPinned(childRel))) continue;
        childToward = true;
      } else if (git && !trackedFile && ignoredBy(git, childRel, isDir)) {
        if (include) childGit = null;
        else if (isDir && leadsToPinned(childRel)) childToward = true;
        else continue;
      } else if (include) {
        childGit = null;
      }

      if (isDir) {
        // git lists a submodule that is not checked out as one path (its gitlink): its directory is empty.
        if (tracked?.files.has(childRel) && !hasGitEntry(childAbs)) {
          warnings.push(`${childRel} is a git submodule that is not checked out, so none of its files are in the archive: run \`git submodule update --init --recursive\` before packing (in GitHub Actions: actions/checkout with \`submodules: recursive\`)`);
          // that warning says it for an include of the submodule, or of a path in it
          for (const inc of includes) if (inc === include || inc.startsWith(`${childRel}/`)) seenIncludes.add(inc);
        }
        const realDir = real ?? realpathSync(childAbs);
        if (ancestors.has(realDir)) {
          warnings.push(`${childRel} is a symlink to a directory that contains it; skipped`);
          continue;
        }
        // A nested repository (a submodule) keeps its own ignore files, as git does.
        let gitBelow = childGit;
        if (gitBelow && hasGitEntry(childAbs)) gitBelow = [];
        const childNames = listDir(childAbs, childRel);
        if (!childNames) continue;
        const nextGit = gitBelow && !childToward ? stackFor(gitBelow, childRel, childAbs, childNames, '.gitignore', warnings) : gitBelow;
        const withComfy = stackFor(nodereg, childRel, childAbs, childNames, '.comfyignore', warnings);
        const nextNodereg = stackFor(withComfy, childRel, childAbs, childNames, '.noderegignore', warnings);
        walk(childAbs, childRel, childNames, nextGit, nextNodereg, childToward, childTowardInclude, new Set([...ancestors, realDir]));
      } else {
        if (skip.size && (skip.has(resolve(childAbs)) || (real && skip.has(real)))) continue;
        if (earlierArchive(childRel, name)) continue;
        const file: SelectedFile = { path: childRel, abs: childAbs, size: stats.size, mode: stats.mode & 0o111 ? 0o755 : 0o644 };
        if (tracked && !tracked.files.has(childRel)) Object.assign(file, { untracked: true }, forced(childRel) ? { included: true } : {});
        // An include is met by a file it brings in: a directory with none (empty, or all its files left out) is not.
        if (include) seenIncludes.add(include);
        files.push(file);
        options.onFile?.(file);
      }
    }
  };

  // In a work tree, git also applies the .gitignore files between its top and the root (a node in a subdirectory).
  const rootGit = stackFor(tracked ? gitignoresAbove(rootReal, tracked.files.size > 0, warnings) : [], '', rootAbs, rootNames, '.gitignore', warnings);
  walk(rootAbs, '', rootNames, rootGit, rootStack, false, false, new Set([rootReal]));

  // Only in a repository that holds the project (one that ignores it whole, around a node of its own, is not asked).
  if (tracked?.files.size) warnMachineIgnored(rootAbs, rootReal, tracked, files.filter((f) => f.untracked && !forced(f.path)), warnings);

  for (const inc of includes) {
    if (!seenIncludes.has(inc)) {
      // a warning, as the incumbent gives: built assets may be absent from a build that does not need them
      warnings.push(`${includesKey}: "${inc}" matches nothing in the project (it does not exist, is an empty directory, or .noderegignore, excludes or the always-excluded names leave it out)`);
    }
  }
  files.sort((a, b) => compareUtf8(a.path, b.path));
  // The registry refuses such archives: names must extract to the same files on every system.
  const checkName = createEntryNameChecker();
  for (const file of files) {
    const problem = entryNameProblem(file.path) ?? checkName(file.path);
    if (problem) problems.push({ key: 'files', message: `${JSON.stringify(file.path)} ${problem}: rename it, or leave it out with .noderegignore` });
  }
  return { files, warnings, problems };
}

/**
 * Names each untracked file that git ignores here only through this machine's settings (core.excludesFile,
 * .git/info/exclude): it ships, as the archive must not depend on the machine, but git status hides it
 * (a `.env` in someone's global excludes). git's list of untracked files came with the tracked ones.
 */
function warnMachineIgnored(root: string, rootReal: string, tracked: Tracked, untracked: SelectedFile[], warnings: string[]): void {
  if (!untracked.length) return;
  const shown = new Set(tracked.others);
  const repositories = tracked.others.filter((path) => path.endsWith('/')); // nested repositories: git lists only their directory
  for (const file of untracked) {
    if (shown.has(file.path) || repositories.some((dir) => file.path.startsWith(dir)) || underGitlink(root, file.path, tracked.files)) continue;
    // git does not look through a symlinked directory: a file reached that way is none of its business
    if (realpathSync(dirname(file.abs)) !== join(rootReal, dirname(file.path))) continue;
    warnings.push(`${file.path} is ignored by this machine's git settings (core.excludesFile or .git/info/exclude), not by the project: it ships (the archive follows the project's ignore files only); if it should not, add it to .gitignore or .noderegignore`);
  }
}

/**
 * Under a repository git tracks as a commit (a gitlink; a checked-out submodule, whose files are listed
 * as tracked, has a .git of its own): git lists none of its untracked files.
 */
function underGitlink(root: string, path: string, trackedFiles: Set<string>): boolean {
  for (let at = path.indexOf('/'); at > 0; at = path.indexOf('/', at + 1)) {
    if (trackedFiles.has(path.slice(0, at)) || hasGitEntry(join(root, path.slice(0, at)))) return true;
  }
  return false;
}

/**
 * The .gitignore files of the work tree's top and of each directory down to `rootReal`'s parent,
 * outermost first; none when they ignore the root and git tracks nothing in it: the project is not
 * part of that repository (a node of its own under ComfyUI/custom_nodes, not yet a repository).
 */
function gitignoresAbove(rootReal: string, tracksSome: boolean, warnings: string[]): Frame[] {
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
    if (patterns !== undefined) frames.push({ base: '', prefix: `${toArchivePath(top, rootReal)}/`, ig: newIgnore().add(patterns) });
  }
  for (let i = frames.length - 1; i >= 0 && !tracksSome; i--) {
    const result = frames[i].ig.test(bytes(frames[i].prefix!));
    if (result.ignored) return [];
    if (result.unignored) break;
  }
  return frames;
}

function hasGitEntry(dir: string): boolean {
  try {
    lstatSync(join(dir, '.git'));
    return true;
  } catch {
    return false;
  }
}

/** The path of `abs` relative to `root`, `/`-separated. */
export function toArchivePath(root: string, abs: string): string {
  return relative(root, abs).split(sep).join('/');
}
