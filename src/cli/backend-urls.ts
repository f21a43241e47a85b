// The URLs of `--database` and `--storage` (serve, backup, restore): a flag wins over its environment
// variable, and a bad URL names whichever was used (Output prints a URL's password as ***).
import { Option } from 'commander';
import { CliError, EXIT, invalidInput } from './errors.js';

/** Each backend's flag, and the environment variable it falls back to. */
const BACKENDS = {
  database: { flag: '--database', env: 'NODEREG_DATABASE_URL' },
  storage: { flag: '--storage', env: 'NODEREG_STORAGE_URL' },
} as const;
type Backend = keyof typeof BACKENDS;

/** The option `--database <url>` or `--storage <url>`: `help` says what it is to this command, the variable is added. */
export const backendOption = (backend: Backend, help: string) =>
  new Option(`${BACKENDS[backend].flag} <url>`, `${help}; env ${BACKENDS[backend].env}`);

export interface BackendUrl {
  text: string;
  /** The flag or variable it came from. */
  name: string;
}

/** The URL of `backend`: its flag's value in `flags`, else its variable's; undefined when neither is set. */
export function backendUrl(
  env: NodeJS.ProcessEnv,
  flags: Partial<Record<Backend, string>>,
  backend: Backend,
): BackendUrl | undefined {
  const { flag, env: variable } = BACKENDS[backend];
  const value = flags[backend];
  return value !== undefined
    ? { text: value, name: flag }
    : env[variable]
      ? { text: env[variable]!, name: variable }
      : undefined;
}

/**
 * PostgreSQL's invalid_catalog_name: the database the URL names was never created, and a retry cannot
 * help: exit 2 naming the flag or variable, and how to create it. Undefined for any other error.
 */
export function missingDatabase(url: BackendUrl, error: unknown, then: string): CliError | undefined {
  if ((error as { code?: unknown }).code !== '3D000') return undefined;
  return invalidInput(
    `${url.name}: ${(error as Error).message} on that PostgreSQL server`,
    `create it first (e.g. createdb, or CREATE DATABASE as a role that may), then ${then}`,
  );
}

/** `use(url)`: a bad URL is exit 2 naming its flag or variable, as is a PostgreSQL database never created; any other failure exit 1, naming what could not be opened. */
export async function withBackend<T>(
  url: BackendUrl | undefined,
  use: (text: string) => T | Promise<T>,
): Promise<T | undefined> {
  const { BackendUrlError } = await import('../server/backends.js');
  try {
    return url && (await use(url.text));
  } catch (error) {
    if (error instanceof BackendUrlError) throw invalidInput(`${url!.name}: ${error.message}`);
    const missing = missingDatabase(url!, error, 'start it again');
    if (missing) throw missing;
    // A hint the backend gives (the S3 endpoint to set, when the bucket's host does not resolve).
    const hint = (error as { hint?: unknown }).hint;
    throw new CliError(
      `cannot open ${url!.name} ${url!.text}: ${(error as Error).message}`,
      EXIT.failure,
      'data_dir',
      typeof hint === 'string' ? hint : undefined,
    );
  }
}
