import { Option } from 'commander';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { userPath } from './make-dir.js';

/** The option `--data-dir <dir>`: `help` says what the dir is to this command (`more`, after its default). */
export const dataDirOption = (help: string, more = '') =>
  new Option(
    '--data-dir <dir>',
    `${help} (default: $XDG_DATA_HOME/nodereg, else ~/.local/share/nodereg${more && `; ${more}`})`,
  );

/** The registry's default data dir: `$XDG_DATA_HOME/nodereg`, else `~/.local/share/nodereg`. */
export function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_DATA_HOME
    ? userPath(env.XDG_DATA_HOME, 'XDG_DATA_HOME')
    : join(env.HOME || homedir(), '.local', 'share');
  return resolve(base, 'nodereg');
}
