// The file set of DESIGN.md §6. In a git work tree, the files git tracks are always in; outside git,
// and for untracked files, every file not ignored by the nested .gitignore files (git's semantics).
// .noderegignore and .comfyignore files and `excludes` remove files, tracked or not; the `includes`
// are forced in. The `ignore` package matches one file's patterns; the scoping per directory, the
// precedence of deeper files and the rule that nothing under an excluded directory comes back are ours.
import { createEntryNameChecker, entryNameProblem } from '../contract/archive-names.js';
import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { hasGitEntry, type Tracked, trackedFiles, warnMachineIgnored, warnMissingTracked } from './files/git.js';
import { bytes, type Frame, gitignoresAbove, ignoredBy, newIgnore, readIgnoreFile, stackFor } from './files/ignore.js';
import type { Problem } from './manifest.js';

export { toArchivePath } from './files/ignore.js';

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

/** An earlier pack of this node, by its name: `<id>-<version>.zip`. */
const PACK_NAME = /^(.+)-\d+\.\d+\.\d+[0-9A-Za-z.+-]*\.zip$/;

/** Never packed, whatever the ignore files say. */
const ALWAYS_EXCLUDED = new Set([
  '.git',
  '.hg',
  '.svn',
  '.bzr',
  '_darcs',
  'CVS',
  '__pycache__',
  '.venv',
  'node_modules',
]);
const alwaysExcluded = (name: string, isDir: boolean) => ALWAYS_EXCLUDED.has(name) || (!isDir && name.endsWith('.pyc'));

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

/** Cleans an `includes` entry: relative to the root (a leading `/` means the root, as the incumbent reads it), `/`-separated, no `..`. */
function normaliseInclude(entry: string): string | undefined {
  const cleaned = entry
    .replace(/\\/g, '/')
    .replace(/^(\.?\/)+/, '')
    .replace(/\/+$/, '');
  if (!cleaned || cleaned.split('/').includes('..')) return undefined;
  return cleaned;
}

/** What one selection shares while it walks the tree. */
interface Walk {
  options: SelectOptions;
  rootReal: string;
  skip: Set<string>;
  includes: string[];
  tracked: Tracked | undefined;
  /** The includes a file was found for (or a warning already named). */
  seenIncludes: Set<string>;
  files: SelectedFile[];
  warnings: string[];
}

/**
 * Where the walk is. `git`: the .gitignore stack, or null inside a forced include (gitignore does not
 * apply). `nodereg`: the .comfyignore and .noderegignore stack (excludes at the root). `toward`: inside
 * a gitignored directory, walking only to reach an include or a tracked file. `towardInclude`: inside
 * a directory .comfyignore leaves out, walking only to reach an include.
 */
interface Place {
  git: Frame[] | null;
  nodereg: Frame[];
  toward: boolean;
  towardInclude: boolean;
  ancestors: Set<string>;
}

const forced = (w: Walk, rel: string) => w.includes.find((inc) => rel === inc || rel.startsWith(`${inc}/`));
/** A directory that leads to something in whatever ignore files say: an include, or a tracked file. */
const leadsToInclude = (w: Walk, rel: string) => w.includes.some((inc) => inc.startsWith(`${rel}/`));
const leadsToPinned = (w: Walk, rel: string) => leadsToInclude(w, rel) || w.tracked?.dirs.has(rel) === true;
/** Never packed: the incumbent's `node.zip` at the root, and earlier packs of this node anywhere. */
const earlierArchive = (w: Walk, rel: string, name: string) =>
  rel === 'node.zip' || (w.options.nodeId !== undefined && PACK_NAME.exec(name)?.[1] === w.options.nodeId);

function listDir(warnings: string[], dirAbs: string, rel: string): string[] | undefined {
  try {
    return readdirSync(dirAbs);
  } catch (error) {
    warnings.push(`cannot read directory ${rel || '.'}: ${(error as Error).message}`);
    return undefined;
  }
}

/** Lists the files to pack under `root`, sorted by UTF-8 bytes. Problems and warnings are collected. */
export function selectFiles(root: string, options: SelectOptions = {}): FileSet {
  const warnings: string[] = [];
  const problems: Problem[] = [];
  const rootAbs = resolve(root);
  const rootReal = realpathSync(rootAbs);
  const includesKey = options.includesKey ?? '[tool.nodereg] includes';
  const includes: string[] = [];
  for (const entry of options.includes ?? []) {
    const cleaned = normaliseInclude(entry);
    if (cleaned === undefined)
      problems.push({ key: includesKey, message: `"${entry}" must be a path inside the project` });
    else includes.push(cleaned);
  }
  const tracked = trackedFiles(rootAbs, warnings, problems);
  const w: Walk = {
    options,
    rootReal,
    skip: new Set((options.skip ?? []).map((p) => resolve(p))),
    includes,
    tracked,
    seenIncludes: new Set<string>(),
    files: [],
    warnings,
  };
  const rootNames = listDir(warnings, rootAbs, '') ?? [];
  const nodereg = rootNoderegStack(rootAbs, rootNames, options, warnings);
  // In a work tree, git also applies the .gitignore files between its top and the root (a node in a subdirectory).
  const above = tracked ? gitignoresAbove(rootReal, tracked.files.size > 0, warnings) : [];
  const rootGit = stackFor(above, '', rootAbs, rootNames, '.gitignore', warnings);
  const place = { git: rootGit, nodereg, toward: false, towardInclude: false, ancestors: new Set([rootReal]) };
  walkDir(w, rootAbs, '', rootNames, place);
  const { files } = w;
  // Only in a repository that holds the project (one that ignores it whole, around a node of its own, is not asked).
  if (tracked?.files.size)
    warnMachineIgnored(
      rootAbs,
      rootReal,
      tracked,
      files.filter((f) => f.untracked && !forced(w, f.path)),
      warnings,
    );
  if (tracked?.files.size) warnMissingTracked(rootAbs, tracked, warnings);
  for (const inc of includes) {
    if (!w.seenIncludes.has(inc)) {
      // a warning, as the incumbent gives: built assets may be absent from a build that does not need them
      warnings.push(
        `${includesKey}: "${inc}" matches nothing in the project (it does not exist, is an empty directory, or .noderegignore, excludes or the always-excluded names leave it out)`,
      );
    }
  }
  files.sort((a, b) => compareUtf8(a.path, b.path));
  checkNames(files, problems);
  return { files, warnings, problems };
}

/** The root's .comfyignore, then its .noderegignore and `excludes`. */
function rootNoderegStack(rootAbs: string, rootNames: string[], options: SelectOptions, warnings: string[]): Frame[] {
  const rootNodereg = newIgnore();
  const rootNoderegFile = rootNames.includes('.noderegignore')
    ? readIgnoreFile(join(rootAbs, '.noderegignore'), warnings)
    : undefined;
  if (rootNoderegFile !== undefined) rootNodereg.add(rootNoderegFile);
  rootNodereg.add((options.excludes ?? []).map(bytes));
  const rootStack = stackFor([], '', rootAbs, rootNames, '.comfyignore', warnings);
  // Without patterns it decides nothing, and testing every path against it is a noticeable part of the listing's time.
  if (rootNoderegFile !== undefined || options.excludes?.length) rootStack.push({ base: '', ig: rootNodereg });
  return rootStack;
}

/** The registry refuses such archives: names must extract to the same files on every system. */
function checkNames(files: SelectedFile[], problems: Problem[]): void {
  const checkName = createEntryNameChecker();
  for (const file of files) {
    const problem = entryNameProblem(file.path) ?? checkName(file.path);
    if (problem)
      problems.push({
        key: 'files',
        message: `${JSON.stringify(file.path)} ${problem}: rename it, or leave it out with .noderegignore`,
      });
  }
}

function walkDir(w: Walk, dirAbs: string, rel: string, names: string[], place: Place): void {
  for (const name of names) {
    const childRel = rel ? `${rel}/${name}` : name;
    const childAbs = join(dirAbs, name);
    const entry = statEntry(w, childAbs, childRel, name);
    if (!entry) continue;
    const isDir = entry.stats.isDirectory();
    if (alwaysExcluded(name, isDir)) continue;
    const include = forced(w, childRel);
    const child = childPlace(w, place, childRel, isDir, include);
    if (!child) continue;
    if (isDir) enterDir(w, childAbs, childRel, include, entry.real, { ...child, ancestors: place.ancestors });
    else addFile(w, childAbs, childRel, name, include, entry);
  }
}

/** The entry's stats (through a symlink that stays inside); undefined, with a warning, when it is skipped. */
function statEntry(
  w: Walk,
  childAbs: string,
  childRel: string,
  name: string,
): { stats: Stats; real?: string } | undefined {
  let stats: Stats;
  let real: string | undefined;
  try {
    stats = lstatSync(childAbs);
    if (stats.isSymbolicLink()) {
      real = realpathSync(childAbs);
      if (real !== w.rootReal && !real.startsWith(w.rootReal + sep)) {
        w.warnings.push(`${childRel} is a symlink that leads out of the project; skipped`);
        return undefined;
      }
      stats = statSync(childAbs);
    }
  } catch (error) {
    const broken = (error as NodeJS.ErrnoException).code === 'ENOENT';
    // A name that is not UTF-8 was listed with U+FFFD in it, so no file answers to it.
    if (broken && name.includes('\ufffd'))
      w.warnings.push(`${childRel}: its name is not valid UTF-8, which an archive name must be; skipped (rename it)`);
    else
      w.warnings.push(
        broken ? `${childRel} is a broken symlink; skipped` : `cannot read ${childRel}: ${(error as Error).message}`,
      );
    return undefined;
  }
  if (!stats.isDirectory() && !stats.isFile()) {
    w.warnings.push(`${childRel} is not a regular file; skipped`);
    return undefined;
  }
  return { stats, real };
}

/** Where the walk is at a child, as the ignore files decide; undefined when they leave it out. */
function childPlace(
  w: Walk,
  place: Place,
  childRel: string,
  isDir: boolean,
  include: string | undefined,
): Omit<Place, 'ancestors'> | undefined {
  const { git, nodereg, toward, towardInclude } = place;
  // .comfyignore leaves nothing out of an include, as the incumbent reads it; .noderegignore and excludes do.
  let childTowardInclude = false;
  if (include) {
    if (ignoredBy(nodereg, childRel, isDir, true)) return undefined;
  } else if (towardInclude || ignoredBy(nodereg, childRel, isDir)) {
    const reachesInclude = isDir && leadsToInclude(w, childRel) && !ignoredBy(nodereg, childRel, isDir, true);
    if (!reachesInclude) return undefined;
    childTowardInclude = true;
  }
  // git never ignores a file it tracks.
  const trackedFile = !isDir && w.tracked?.files.has(childRel) === true;
  const pinned = include !== undefined || trackedFile;
  let childGit = git;
  let childToward = false;
  if (toward && !pinned) {
    if (!(isDir && leadsToPinned(w, childRel))) return undefined;
    childToward = true;
  } else if (git && !trackedFile && ignoredBy(git, childRel, isDir)) {
    if (include) childGit = null;
    else if (isDir && leadsToPinned(w, childRel)) childToward = true;
    else return undefined;
  } else if (include) {
    childGit = null;
  }
  return { git: childGit, nodereg, toward: childToward, towardInclude: childTowardInclude };
}

function enterDir(
  w: Walk,
  childAbs: string,
  childRel: string,
  include: string | undefined,
  real: string | undefined,
  place: Place,
): void {
  const { warnings } = w;
  // git lists a submodule that is not checked out as one path (its gitlink): its directory is empty.
  if (w.tracked?.files.has(childRel) && !hasGitEntry(childAbs)) {
    warnings.push(
      `${childRel} is a git submodule that is not checked out, so none of its files are in the archive: run \`git submodule update --init --recursive\` before packing (in GitHub Actions: actions/checkout with \`submodules: recursive\`)`,
    );
    // that warning says it for an include of the submodule, or of a path in it
    for (const inc of w.includes) if (inc === include || inc.startsWith(`${childRel}/`)) w.seenIncludes.add(inc);
  }
  const realDir = real ?? realpathSync(childAbs);
  if (place.ancestors.has(realDir)) {
    warnings.push(`${childRel} is a symlink to a directory that contains it; skipped`);
    return;
  }
  // A nested repository (a submodule) keeps its own ignore files, as git does.
  let gitBelow = place.git;
  if (gitBelow && hasGitEntry(childAbs)) gitBelow = [];
  const childNames = listDir(warnings, childAbs, childRel);
  if (!childNames) return;
  const nextGit =
    gitBelow && !place.toward ? stackFor(gitBelow, childRel, childAbs, childNames, '.gitignore', warnings) : gitBelow;
  const withComfy = stackFor(place.nodereg, childRel, childAbs, childNames, '.comfyignore', warnings);
  const nextNodereg = stackFor(withComfy, childRel, childAbs, childNames, '.noderegignore', warnings);
  walkDir(w, childAbs, childRel, childNames, {
    git: nextGit,
    nodereg: nextNodereg,
    toward: place.toward,
    towardInclude: place.towardInclude,
    ancestors: new Set([...place.ancestors, realDir]),
  });
}

function addFile(
  w: Walk,
  childAbs: string,
  childRel: string,
  name: string,
  include: string | undefined,
  { stats, real }: { stats: Stats; real?: string },
): void {
  if (w.skip.size && (w.skip.has(resolve(childAbs)) || (real && w.skip.has(real)))) return;
  if (earlierArchive(w, childRel, name)) return;
  const file: SelectedFile = {
    path: childRel,
    abs: childAbs,
    size: stats.size,
    mode: stats.mode & 0o111 ? 0o755 : 0o644,
  };
  if (w.tracked && !w.tracked.files.has(childRel))
    Object.assign(file, { untracked: true }, forced(w, childRel) ? { included: true } : {});
  // An include is met by a file it brings in: a directory with none (empty, or all its files left out) is not.
  if (include) w.seenIncludes.add(include);
  w.files.push(file);
  w.options.onFile?.(file);
}
