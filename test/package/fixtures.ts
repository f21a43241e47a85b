// Fixture trees for the packing tests: plain directories and real git repositories in temp dirs.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '../helpers.js';

/** Writes `{path: content}` under `root` (directories created as needed). */
export function writeTree(root: string, files: Record<string, string | Buffer>): string {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

/** Runs git with no user or system config, so nothing of this machine's setup leaks in. */
export function git(cwd: string, args: string[]): string {
  return execFileSync('git', ['-c', 'core.excludesFile=/dev/null', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
}

/** A fresh git repository holding `files`, nothing added. */
export function gitRepo(files: Record<string, string | Buffer>): string {
  const root = tempDir('nodereg-repo-');
  git(root, ['init', '-q']);
  return writeTree(root, files);
}

/** Commits every file git does not ignore, as a publisher's repository has them. */
export function commitAll(root: string): string {
  git(root, ['add', '-A']);
  git(root, [
    '-c',
    'user.name=Test',
    '-c',
    'user.email=test@example.org',
    'commit',
    '-q',
    '--no-gpg-sign',
    '-m',
    'files',
  ]);
  return root;
}

/** A git repository holding `files`, every one git does not ignore committed. */
export const committedRepo = (files: Record<string, string | Buffer>): string => commitAll(gitRepo(files));

/** The oracle: what git considers part of the work tree. */
export function gitFiles(root: string): string[] {
  return git(root, ['ls-files', '--cached', '--others', '--exclude-standard', '-z']).split('\0').filter(Boolean).sort();
}
