// Where each `serve` setting comes from: its flag, else its environment variable, else its key in the
// TOML file of --config (or NODEREG_CONFIG), else its default. The variable and the key derive from the
// flag's name in the flag table (options.ts and the files it adds), so a new flag has both.
import { readFileSync } from 'node:fs';
import type { Command, Option } from 'commander';
import { CliError, invalidInput } from '../errors.js';

/** Variables named before the rule (NODEREG_ and the flag's name), and PORT, which platforms set. */
const ENV_NAMES: Record<string, string> = {
  port: 'PORT',
  database: 'NODEREG_DATABASE_URL',
  storage: 'NODEREG_STORAGE_URL',
  'oidc-issuer': 'NODEREG_OIDC_ISSUERS',
};

/** The flag that names the config file: it has a variable but no key (a file cannot name itself). */
export const CONFIG_FLAG = '--config';

/** The flags of `command`, without commander's own (--help). */
export const sourcedOptions = (command: Command): Option[] =>
  command.options.filter((option) => option.long !== undefined && option.long !== '--help');

/** The environment variable of a flag: NODEREG_ and its name in upper case (`--max-archive` → NODEREG_MAX_ARCHIVE). */
export function envName(option: Option): string {
  const name = option.long!.slice(2);
  return ENV_NAMES[name] ?? `NODEREG_${name.toUpperCase().replace(/-/g, '_')}`;
}

/** The key of a flag in the config file: its name without `--`; none for --config. */
export function configKey(option: Option): string | undefined {
  return option.long === CONFIG_FLAG ? undefined : option.long!.slice(2);
}

/** Adds its variable to each flag's help (unless the help names it already). */
export function describeSources(command: Command): void {
  for (const option of sourcedOptions(command)) {
    const variable = envName(option);
    if (!option.description.includes(variable)) option.description += ` (env ${variable})`;
  }
}

type Kind = 'boolean' | 'list' | 'value';
const kindOf = (option: Option): Kind => (option.isBoolean() ? 'boolean' : option.variadic ? 'list' : 'value');

/** A flag's value as its variable gives it: a list is comma-separated, a switch is true/false (1/0, yes/no). */
function fromEnv(option: Option, variable: string, text: string): unknown {
  const kind = kindOf(option);
  if (kind === 'boolean') {
    if (/^(1|true|yes|on)$/i.test(text)) return true;
    if (/^(0|false|no|off)$/i.test(text)) return false;
    throw invalidInput(`${variable} must be true or false (got "${text}")`, `${variable}=true`);
  }
  if (kind === 'list')
    return text
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  checkChoice(option, variable, text);
  return text;
}

const EXPECTED: Record<Kind, string> = {
  boolean: 'a boolean (true or false)',
  list: 'an array of strings',
  value: 'a string (or a number)',
};

function typeName(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date || (typeof value === 'object' && value?.constructor?.name === 'TomlDate')) return 'a date';
  if (typeof value === 'object') return 'a table';
  return `${typeof value === 'bigint' ? 'a number' : `a ${typeof value}`} (${String(value)})`;
}

/** A flag's value as the config file gives it, of the type the flag takes. */
function fromFile(option: Option, file: ConfigFile, key: string): unknown {
  const value = file.table[key];
  const kind = kindOf(option);
  const ok =
    kind === 'boolean'
      ? typeof value === 'boolean'
      : kind === 'list'
        ? Array.isArray(value) && value.every((item) => typeof item === 'string')
        : typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint';
  if (!ok)
    throw invalidInput(
      `${file.path}: "${key}" must be ${EXPECTED[kind]} (got ${typeName(value)})`,
      `${key} = ${kind === 'boolean' ? 'true' : kind === 'list' ? '["…"]' : '"…"'}`,
    );
  if (kind !== 'value') return value;
  checkChoice(option, `"${key}" in ${file.path}`, String(value));
  return String(value);
}

function checkChoice(option: Option, name: string, text: string): void {
  const choices = option.argChoices;
  if (choices && !choices.includes(text))
    throw invalidInput(`${name} must be one of ${choices.join(', ')} (got "${text}")`);
}

interface ConfigFile {
  path: string;
  table: Record<string, unknown>;
}

/** Reads and parses the config file; exit 2 naming it (and where it was named) when it cannot be used. */
async function readConfigFile(path: string, namedBy: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw invalidInput(`${namedBy}: cannot read the config file ${path}: ${reason}`);
  }
  const { parse } = await import('smol-toml');
  try {
    return { path, table: parse(text) as Record<string, unknown> };
  } catch (error) {
    throw invalidInput(`${path} (${namedBy}) is not valid TOML: ${(error as Error).message.split('\n')[0]}`);
  }
}

function checkKeys(file: ConfigFile, options: Option[]): void {
  const keys = new Set(options.map(configKey).filter((key) => key !== undefined));
  for (const key of Object.keys(file.table)) {
    if (keys.has(key)) continue;
    const flag = key.startsWith('--') && keys.has(key.slice(2)) ? `; write it without the dashes: ${key.slice(2)}` : '';
    throw invalidInput(
      `${file.path}: unknown key "${key}"${flag}`,
      "the keys are serve's flag names without -- (nodereg serve --help lists them)",
    );
  }
}

/** What each flag that was not given on the command line was taken from: "NODEREG_X" or "\"x\" in FILE". */
export type Origins = Map<string, string>;

/**
 * Fills in each flag not on the command line from its variable, else from the config file; every value
 * is checked for its type (and choices) here, and the rest of serve checks it as it checks the flag's.
 */
export async function layerSources(command: Command, env: NodeJS.ProcessEnv): Promise<Origins> {
  const options = sourcedOptions(command);
  const origins: Origins = new Map();
  for (const option of options) {
    const key = option.attributeName();
    if (command.getOptionValueSource(key) === 'cli') continue;
    const variable = envName(option);
    const text = env[variable];
    if (text) {
      command.setOptionValueWithSource(key, fromEnv(option, variable, text), 'env');
      origins.set(option.long!, variable);
    }
  }
  const configOption = options.find((option) => option.long === CONFIG_FLAG);
  const path = command.getOptionValue('config') as string | undefined;
  if (!configOption || path === undefined) return origins;
  const file = await readConfigFile(path, origins.get(CONFIG_FLAG) ?? CONFIG_FLAG);
  checkKeys(file, options);
  for (const option of options) {
    const key = option.attributeName();
    const fileKey = configKey(option);
    const source = command.getOptionValueSource(key);
    if (fileKey === undefined || !(fileKey in file.table) || source === 'cli' || source === 'env') continue;
    command.setOptionValueWithSource(key, fromFile(option, file, fileKey), 'config');
    origins.set(option.long!, `"${fileKey}" in ${file.path}`);
  }
  return origins;
}

/**
 * An error that names a flag whose value came from a variable or the config file names that instead
 * ("NODEREG_MAX_ARCHIVE must be a size…"): the checks of serve's values speak of flags.
 */
export function namedByOrigin(error: unknown, origins: Origins): unknown {
  if (!(error instanceof CliError) || origins.size === 0) return error;
  const message = error.message.replace(/(?<![\w-])--[a-z][a-z0-9-]*/g, (flag) => origins.get(flag) ?? flag);
  if (message === error.message) return error;
  const named = new CliError(message, error.exitCode, error.code, error.hint, error.status);
  named.fields = error.fields;
  return named;
}
