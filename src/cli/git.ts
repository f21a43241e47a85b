// What the release commands ask git: the tracked files that differ from HEAD, the tags, the commit
// subjects since one, and the commit and tag of `version bump --git`. git runs as the user set it up.
import { spawnSync } from 'node:child_process';
import { CliError, EXIT } from './errors.js';

export interface GitRun {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Runs git in `cwd`; `ok` is false when git is missing or fails. */
export function git(cwd: string, args: string[]): GitRun {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (run.error) return { ok: false, stdout: '', stderr: run.error.message };
  return { ok: run.status === 0, stdout: run.stdout, stderr: run.stderr.trim() };
}

/** Runs git and fails with what it said, naming `doing`. */
export function gitOrFail(cwd: string, args: string[], doing: string): string {
  const run = git(cwd, args);
  if (!run.ok)
    throw new CliError(`git could not ${doing}: ${run.stderr.split('\n')[0] || 'it failed'}`, EXIT.failure, 'git');
  return run.stdout;
}

/** Whether `dir` is in a git work tree whose HEAD is a commit (a repository with no commit has nothing to compare to). */
export const hasHead = (dir: string): boolean => git(dir, ['rev-parse', '--verify', '--quiet', 'HEAD']).ok;

export interface ChangedFile {
  /** Relative to the directory asked about. */
  path: string;
  /** git's letter: M modified, A added, D deleted, T type changed, U unmerged. */
  status: string;
}

/**
 * The tracked files under `dir` that differ from HEAD, staged or not (added to the index counts:
 * HEAD lacks it). Undefined outside a git work tree, or before its first commit.
 */
export function changedFiles(dir: string): ChangedFile[] | undefined {
  if (!hasHead(dir)) return undefined;
  const run = git(dir, ['diff', '--name-status', '--no-renames', '-z', '--relative', 'HEAD', '--', '.']);
  if (!run.ok) return undefined;
  const parts = run.stdout.split('\0');
  const changed: ChangedFile[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) changed.push({ status: parts[i], path: parts[i + 1] });
  return changed;
}

/** `M pkg/a.py, D old.py` for a message, with the count of the rest past `named`. */
export function changedList(changed: ChangedFile[], named = 10): string {
  const words: Record<string, string> = { M: 'modified', A: 'added', D: 'deleted', T: 'type changed', U: 'unmerged' };
  const shown = changed.slice(0, named).map((f) => `${f.path.replace(/\n/g, '\\n')} (${words[f.status] ?? f.status})`);
  const more = changed.length > named ? `, and ${changed.length - named} more` : '';
  return `${shown.join(', ')}${more}`;
}
