import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The registry's default data dir: `$XDG_DATA_HOME/nodereg`, else `~/.local/share/nodereg`. */
export function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share');
  return resolve(base, 'nodereg');
}
