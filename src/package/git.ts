// git's listing of a project's tracked files (files.ts reads it), in a module of its own so that a
// command can start git before it loads the packer.
import { execFile } from 'node:child_process';

export const GIT_LS_FILES = ['ls-files', '-z', '--cached', '--recurse-submodules'];
export const GIT_MAX_BUFFER = 1 << 30;

/** What `git ls-files` said about a root: spawnSync's fields that trackedFiles reads. */
export interface GitListing {
  error?: Error;
  status: number | null;
  stdout: Buffer;
  stderr: Buffer;
}

/**
 * git's listing of `root`, run in the background: a caller starts it before it loads the rest of the
 * packer and reads the manifest (a few ms that git's start then hides), and passes it to selectFiles.
 */
export function listTracked(root: string): Promise<GitListing> {
  return new Promise((resolve) => {
    execFile('git', GIT_LS_FILES, { cwd: root, encoding: 'buffer', maxBuffer: GIT_MAX_BUFFER }, (error, stdout, stderr) => {
      // a git that ran and said no is a status, as spawnSync gives it; anything else (no git, a buffer overrun) an error
      const status = typeof error?.code === 'number' ? error.code : error ? null : 0;
      resolve({ error: error && status === null ? error : undefined, status, stdout, stderr });
    });
  });
}
