import type { Command } from 'commander';
import { redactToken } from '../config.js';
import { DEFAULT_REGISTRY_URL } from '../../shared/tuning.js';
import { isHttpUrl } from '../../contract/url.js';
import { withScheme, type Ctx } from '../context.js';
import { invalidInput } from '../errors.js';
import { shellWord } from '../invocation.js';
import { table } from '../output.js';
import { examples } from '../examples.js';

const KEYS = ['registry', 'token'] as const;
type Key = (typeof KEYS)[number];

function checkKey(key: string): Key {
  if (!(KEYS as readonly string[]).includes(key))
    throw invalidInput(`unknown key "${key}"`, `keys are: ${KEYS.join(', ')}`);
  return key as Key;
}

/** Tokens are never printed: `token` shows only whether one is set. */
const shown = (key: Key, value: string | undefined) => (key === 'token' ? redactToken(value) : (value ?? ''));

export function register(program: Command, ctx: Ctx): void {
  const config = examples(
    program.command('config').description('get, set or list profile settings (registry, token)'),
    ['nodereg config list', 'nodereg config set registry http://127.0.0.1:4880'],
  );
  const profileName = () => ctx.globals().profile ?? ctx.env.NODEREG_PROFILE ?? 'default';
  /** A profile named with --profile or NODEREG_PROFILE must exist to be read or listed (`set` makes it). */
  const checkProfile = (profiles: Record<string, unknown>) => {
    const name = ctx.globals().profile ?? ctx.env.NODEREG_PROFILE;
    if (name === undefined || name in profiles) return;
    const known = Object.keys(profiles);
    throw invalidInput(
      `there is no profile named "${name}" (${known.length ? `profiles: ${known.join(', ')}` : 'none is saved yet'})`,
      `save one with \`nodereg login --profile ${shellWord(name)}\`, or save its registry (nodereg --profile ${shellWord(name)} config set registry, then the URL)`,
    );
  };

  examples(
    config
      .command('get <key>')
      .description(`print one setting of the profile (${KEYS.join(', ')}; a token is shown redacted)`)
      .action(async (key: string) => {
        const k = checkKey(key);
        const store = await ctx.config();
        checkProfile(store.profiles());
        const value = store.profile(profileName())[k];
        ctx.out.result({ profile: profileName(), key: k, value: shown(k, value) }, shown(k, value));
      }),
    ['nodereg config get registry', 'nodereg --profile work config get registry'],
  );

  examples(
    config
      .command('set <key> [value]')
      .description('set one setting of the profile; a token given without a value is read from stdin')
      .action(async (key: string, value: string | undefined) => {
        const k = checkKey(key);
        if (value === undefined) {
          if (k !== 'token') throw invalidInput(`missing value for ${k}`, `nodereg config set ${k} <value>`);
          value = (await ctx.readStdin()).trim();
          if (!value) throw invalidInput('no token on stdin', 'echo "$TOKEN" | nodereg config set token');
        }
        // Checked as a command reads it: `new URL` took `registry.example.com:8443` (a scheme, then a path), which every command then refused.
        if (k === 'registry' && !isHttpUrl(value)) {
          throw invalidInput(
            `registry "${value}" is not an http:// or https:// URL`,
            `nodereg config set registry ${withScheme(value) ?? DEFAULT_REGISTRY_URL}`,
          );
        }
        const store = await ctx.config();
        store.setProfile(profileName(), { [k]: value });
        ctx.out.result({ profile: profileName(), key: k, value: shown(k, value) }, '');
        ctx.out.success(`set ${k} of profile ${profileName()} to ${shown(k, value)}`);
      }),
    ['nodereg config set registry http://127.0.0.1:4880', 'echo "$TOKEN" | nodereg config set token'],
  );

  examples(
    config
      .command('list')
      .description("list every profile (tokens and URLs' users and passwords redacted) and where the config file is")
      .action(async () => {
        const store = await ctx.config();
        checkProfile(store.profiles());
        const profiles = Object.entries(store.profiles()).map(([name, p]) => ({
          name,
          registry: p.registry ?? '',
          token: redactToken(p.token),
        }));
        ctx.out.result({ path: store.path, profiles }, () =>
          profiles.length
            ? `${table(
                profiles.map((p) => [p.name, p.registry, p.token]),
                ['PROFILE', 'REGISTRY', 'TOKEN'],
              )}\n\nconfig file: ${store.path}`
            : `no profiles yet (config file: ${store.path})`,
        );
      }),
    ['nodereg config list', 'nodereg config list --json'],
  );
}
