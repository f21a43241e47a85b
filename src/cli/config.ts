import { chmodSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_REGISTRY_URL } from '../contract/limits.js';

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
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'nodereg');
}

/** Registry URLs compare without a trailing slash. */
export function sameRegistry(a: string | undefined, b: string | undefined): boolean {
  return (a ?? '').replace(/\/+$/, '') === (b ?? '').replace(/\/+$/, '');
}

/** Named profiles of `{registry, token}` in a file of mode 0600. Loaded only when a command needs one. */
export class ConfigStore {
  private constructor(private readonly store: import('conf').default<ConfigData>) {}

  static async open(env: NodeJS.ProcessEnv): Promise<ConfigStore> {
    const { default: Conf } = await import('conf');
    const store = new Conf<ConfigData>({
      projectName: 'nodereg',
      projectSuffix: '',
      cwd: configDir(env),
      configFileMode: 0o600,
      defaults: { profiles: {} },
    });
    return new ConfigStore(store);
  }

  get path(): string {
    return this.store.path;
  }

  profiles(): Record<string, Profile> {
    return this.store.get('profiles') ?? {};
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
    this.store.set('profiles', { ...this.profiles(), [name]: next });
    chmodSync(this.store.path, 0o600);
  }

  removeProfile(name: string): void {
    const { [name]: _removed, ...rest } = this.profiles();
    this.store.set('profiles', rest);
    chmodSync(this.store.path, 0o600);
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
