// The URLs of `--database` and `--storage` (serve, restore): a flag wins over its environment
// variable, a bad URL names whichever was used, and a printed PostgreSQL URL hides its password.
import { CliError, EXIT, invalidInput } from './errors.js';

export interface BackendUrl {
  text: string;
  /** The flag or variable it came from. */
  name: string;
}

export function backendUrl(env: NodeJS.ProcessEnv, flag: string | undefined, flagName: string, envName: string): BackendUrl | undefined {
  return flag !== undefined ? { text: flag, name: flagName } : env[envName] ? { text: env[envName]!, name: envName } : undefined;
}

/** A database URL as it may be printed (start-up lines, errors): its password (to the last @ of the host part) replaced by ***. */
export const withoutPassword = (text: string) => text.replace(/^(postgres(?:ql)?:\/\/[^:@/]*:)[^/]*@/i, '$1***@');

/** `use(url)`: a bad URL is exit 2 naming its flag or variable; any other failure exit 1, naming what could not be opened. */
export async function withBackend<T>(url: BackendUrl | undefined, use: (text: string) => T | Promise<T>): Promise<T | undefined> {
  const { BackendUrlError } = await import('../server/backends.js');
  try {
    return url && (await use(url.text));
  } catch (error) {
    if (error instanceof BackendUrlError) throw invalidInput(`${url!.name}: ${error.message}`);
    throw new CliError(`cannot open ${url!.name} ${withoutPassword(url!.text)}: ${(error as Error).message}`, EXIT.failure, 'data_dir');
  }
}
