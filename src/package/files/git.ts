// What git says of the project: the files it tracks and lists, and what only this machine ignores.
import { spawnSync } from 'node:child_process';
import { lstatSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SelectedFile } from '../files.js';
import type { Problem } from '../manifest.js';

/** What git tracks under the root: the files, and every directory holding one; and what it lists as untracked. */
export interface Tracked {
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
export function trackedFiles(root: string, warnings: string[], problems: Problem[]): Tracked | undefined {
  // Tracked (with their modes) and untracked in one listing: git takes --recurse-submodules with
  // --cached alone, so a submodule (a gitlink, mode 160000) is listed again below, for its files.
  const run = spawnSync('git', ['ls-files', '-z', '--stage', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'buffer',
    maxBuffer: 1 << 30,
  });
  if (run.error) {
    // No git at all: the ignore files are all there is to go by.
    if (hasGitEntry(root))
      warnings.push(
        `git could not list the tracked files (${run.error.message}); the file set follows the ignore files only`,
      );
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
      problems.push({
        key: 'files',
        message: `git could not list the tracked files, so a committed file that .gitignore matches would be left out; fix what git says: ${said.split(/\s*\n\s*/).join(' ')}`,
      });
    } else if (hasGitEntry(root)) {
      warnings.push(
        `${join(root, '.git')} is not a git repository (${said.split('\n')[0]}); the file set follows the ignore files only`,
      );
    } else if (!noRepository) {
      warnings.push(
        `git could not list the tracked files (${said.split('\n')[0]}); the file set follows the ignore files only`,
      );
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
    const withSubmodules = spawnSync('git', ['ls-files', '-z', '--cached', '--recurse-submodules'], {
      cwd: root,
      encoding: 'buffer',
      maxBuffer: 1 << 30,
    });
    if (!withSubmodules.error && withSubmodules.status === 0)
      files = new Set(withSubmodules.stdout.toString('utf8').split('\0').filter(Boolean));
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

/**
 * Names each untracked file that git ignores here only through this machine's settings (core.excludesFile,
 * .git/info/exclude): it ships, as the archive must not depend on the machine, but git status hides it
 * (a `.env` in someone's global excludes). git's list of untracked files came with the tracked ones.
 */
export function warnMachineIgnored(
  root: string,
  rootReal: string,
  tracked: Tracked,
  untracked: SelectedFile[],
  warnings: string[],
): void {
  if (!untracked.length) return;
  const shown = new Set(tracked.others);
  const repositories = tracked.others.filter((path) => path.endsWith('/')); // nested repositories: git lists only their directory
  for (const file of untracked) {
    if (
      shown.has(file.path) ||
      repositories.some((dir) => file.path.startsWith(dir)) ||
      underGitlink(root, file.path, tracked.files)
    )
      continue;
    // git does not look through a symlinked directory: a file reached that way is none of its business
    if (realpathSync(dirname(file.abs)) !== join(rootReal, dirname(file.path))) continue;
    warnings.push(
      `${file.path} is ignored by this machine's git settings (core.excludesFile or .git/info/exclude), not by the project: it ships (the archive follows the project's ignore files only); if it should not, add it to .gitignore or .noderegignore`,
    );
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

export function hasGitEntry(dir: string): boolean {
  try {
    lstatSync(join(dir, '.git'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Names the files git tracks that the working tree lacks (deleted, or a failed LFS or sparse
 * checkout): they cannot ship, and leaving them out without a word would publish less than the commit.
 */
export function warnMissingTracked(root: string, tracked: Tracked, warnings: string[]): void {
  const missing: string[] = [];
  for (const file of tracked.files) {
    try {
      lstatSync(join(root, file));
    } catch {
      missing.push(file);
    }
  }
  if (!missing.length) return;
  const shown = missing.slice(0, 5).join(', ') + (missing.length > 5 ? ` and ${missing.length - 5} more` : '');
  warnings.push(
    `${missing.length === 1 ? 'a file git tracks is' : `${missing.length} files git tracks are`} missing from the working tree, so not in the archive: ${shown} (deleted, or a failed LFS or sparse checkout); restore with git checkout, or commit the deletion`,
  );
}
