// The flags of `nodereg serve` that make it a mirror of another registry (DESIGN.md §13): the upstream,
// how long its answers are kept current, the operator's policy file and the ids local publishers may
// take although upstream holds them.
import type { Command } from 'commander';
import type { MirrorOptions } from '../../server/mirror/service.js';
import { parseDuration } from '../duration.js';
import { invalidInput } from '../errors.js';
import { parseSizeFlag } from './values.js';

export interface UpstreamFlags {
  upstream?: string;
  upstreamTtl: string;
  upstreamPolicy?: string;
  upstreamAllow?: string[];
  upstreamCacheMax?: string;
  upstreamPinDays: string;
}

export function addUpstreamFlags(command: Command): Command {
  return command
    .option(
      '--upstream <url>',
      'mirror this registry (it speaks the hosted read API): nodes this one does not hold are read from it and kept, archives pinned to their first sha256 (env NODEREG_UPSTREAM)',
    )
    .option('--upstream-ttl <duration>', 'how long a kept upstream answer is current before it is renewed', '10m')
    .option(
      '--upstream-policy <file>',
      'TOML filter of upstream versions: hold back young ones, block ids, ranges and bad dependency pins, allow only some publishers (see docs/upstream-policy.example.toml)',
    )
    .option(
      '--upstream-cache-max <size>',
      'most bytes of upstream archives kept; past it the least recently used that are not pinned are evicted (no limit unless set)',
    )
    .option(
      '--upstream-pin-days <days>',
      'an archive installed through the mirror in the last this many days is pinned: never evicted by --upstream-cache-max (synced ones always are)',
      '7',
    )
    .option(
      '--upstream-allow <id...>',
      'node ids a local publisher may publish although upstream holds them under another publisher',
    );
}

/** The mirror's options from the flags, the policy file read and checked; undefined without an upstream. */
export async function upstreamOptionsFromFlags(flags: UpstreamFlags): Promise<MirrorOptions | undefined> {
  const url = flags.upstream;
  if (url === undefined) {
    if (flags.upstreamPolicy !== undefined)
      throw invalidInput(
        '--upstream-policy needs --upstream (or NODEREG_UPSTREAM)',
        '--upstream https://registry.example.com',
      );
    return undefined;
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol))
    throw invalidInput(
      `--upstream must be an http or https URL (got "${url}")`,
      '--upstream https://registry.example.com',
    );
  const ttlMs = parseDuration(flags.upstreamTtl, '--upstream-ttl', 'm');
  let policy: MirrorOptions['policy'];
  if (flags.upstreamPolicy !== undefined) {
    const { loadPolicy } = await import('../../server/mirror/policy.js');
    try {
      policy = loadPolicy(flags.upstreamPolicy);
    } catch (error) {
      throw invalidInput(`--upstream-policy: ${(error as Error).message}`);
    }
  }
  const cacheMaxBytes =
    flags.upstreamCacheMax === undefined ? undefined : parseSizeFlag('--upstream-cache-max', flags.upstreamCacheMax);
  const pinDays = Number(flags.upstreamPinDays);
  if (!/^\d+$/.test(flags.upstreamPinDays) || pinDays > 3650)
    throw invalidInput(
      `--upstream-pin-days must be a whole number of days from 0 to 3650 (got "${flags.upstreamPinDays}")`,
      '--upstream-pin-days 7',
    );
  return { url, ttlMs, policy, allowIds: flags.upstreamAllow ?? [], cacheMaxBytes, pinDays };
}
