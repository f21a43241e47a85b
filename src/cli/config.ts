import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_REGISTRY_URL } from '../shared/tuning.js';
import { CliError, EXIT } from './errors.js';
import { makeUserDir, userPath } from './make-dir.js';

export interface Profile {
  registry?: string;
  token?: string;
}

interface ConfigData {
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = 'default';

/** Where the config lives: `$XDG_CONFIG_HOME/nodereg`, else `~/.config/nodereg`. */
export function configDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME
    ? userPath(env.XDG_CONFIG_HOME, 'XDG_CONFIG_HOME')
    : join(env.HOME || homedir(), '.config');
  return join(base, 'nodereg');
}

/** Registry URLs compare without a trailing slash. */
export function sameRegistry(a: string | undefined, b: string | undefined): boolean {
  return (a ?? '').replace(/\/+$/, '') === (b ?? '').replace(/\/+$/, '');
}

/**
 * Named profiles of `{registry, token}` in `config.json` of the config dir, mode 0600, tab-indented
 * JSON (the file and format the `conf` package wrote before: existing files are read as they are, and
 * keys this version does not know are kept). Read once, only when a command needs a profile; every
 * save writes a temp file of mode 0600 and renames it over the old one.
 */
export class ConfigStore {
  private constructor(
    readonly path: string,
    private data: ConfigData & Record<string, unknown>,
    /** The variable the config dir comes from, named when it cannot be made. */
    private readonly source: string,
  ) {}

  static async open(env: NodeJS.ProcessEnv): Promise<ConfigStore> {
    const path = join(configDir(env), 'config.json');
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    let data: unknown = {};
    try {
      if (text !== undefined && text.trim() !== '') data = JSON.parse(text);
    } catch (error) {
      throw new CliError(
        `${path} is not valid JSON (${(error as Error).message})`,
        EXIT.invalid,
        'invalid_input',
        `fix the file, or remove it to start with no profiles`,
      );
    }
    const object =
      data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
    const profiles =
      object.profiles !== null && typeof object.profiles === 'object'
        ? (object.profiles as Record<string, Profile>)
        : {};
    return new ConfigStore(path, { ...object, profiles }, env.XDG_CONFIG_HOME ? 'XDG_CONFIG_HOME' : 'HOME');
  }

  private save(): void {
    makeUserDir(join(this.path, '..'), this.source, 0o700);
    const temp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(this.data, undefined, '\t')}\n`, { mode: 0o600 });
    renameSync(temp, this.path);
  }

  profiles(): Record<string, Profile> {
    return this.data.profiles;
  }

  profile(name: string): Profile {
    return this.profiles()[name] ?? {};
  }

  /** Merges `changes` into a profile; `undefined` values remove keys. Re-applies 0600 on every save. */
  setProfile(name: string, changes: Partial<Profile>): void {
    const next: Profile = { ...this.profile(name) };
    for (const [key, value] of Object.entries(changes) as [keyof Profile, string | undefined][]) {
      if (value === undefined) delete next[key];
      else next[key] = value;
    }
    this.data.profiles = { ...this.profiles(), [name]: next };
    this.save();
  }

  removeProfile(name: string): void {
    const { [name]: _removed, ...rest } = this.profiles();
    this.data.profiles = rest;
    this.save();
  }

  /** The profile that talks to `url`: one whose registry is that URL, else the default one if it has none. */
  profileFor(url: string): string | undefined {
    const entries = Object.entries(this.profiles());
    const match = entries.find(([, p]) => sameRegistry(p.registry ?? DEFAULT_REGISTRY_URL, url));
    return match?.[0];
  }
}

/** Shows that a token is set without showing it. */
export function redactToken(token: string | undefined): string {
  if (!token) return '(none)';
  const prefix = /^nrg_(u|pat)_/.exec(token)?.[0] ?? '';
  return `${prefix}…(redacted)`;
}
