// The AI proxy's flags of `nodereg serve` (DESIGN.md §4), checked before anything starts.
import type { Command } from 'commander';
import { DEFAULT_SANDBOX_QUOTA } from '../shared/tuning.js';
import { formatSize } from '../contract/size.js';
import { parseSize } from '../shared/size.js';
import { callbackAllowProblem, DEFAULT_CALLBACK_ALLOW, type ProxyOptions } from '../server/proxy/options.js';
import { parseDuration } from './duration.js';
import { invalidInput } from './errors.js';

export interface ProxyFlags {
  imgUpstream?: string;
  vidUpstream?: string;
  imgUpstreamKeyHeader?: string;
  vidUpstreamKeyHeader?: string;
  upstreamTimeout?: string;
  sandboxDelay?: string;
  callbackTimeout?: string;
  callbackBackoff?: string;
  callbackAllow?: string;
  sandboxQuotaUser?: string;
  sandboxQuotaTotal?: string;
}

export function addProxyFlags(command: Command): Command {
  return command
    .option(
      '--img-upstream <url>',
      'AI proxy: forward relight and skin enhancer to this provider (key from env NODEREG_IMG_API_KEY); sandbox when unset',
    )
    .option(
      '--vid-upstream <url>',
      'AI proxy: forward video extend to this provider (key from env NODEREG_VID_API_KEY); sandbox when unset',
    )
    .option(
      '--img-upstream-key-header <name>',
      'header carrying the image provider key (default Authorization: Bearer KEY)',
    )
    .option(
      '--vid-upstream-key-header <name>',
      'header carrying the video provider key (default Authorization: Bearer KEY)',
    )
    .option(
      '--upstream-timeout <duration>',
      'how long a provider has to answer, then 504 (default 30s; a bare number is ms)',
    )
    .option('--sandbox-delay <ms>', 'sandbox: time from submission to the final state (default 1500)')
    .option('--callback-timeout <duration>', 'how long a callback receiver has to answer (default 5s)')
    .option('--callback-backoff <duration>', 'wait before the first callback retry, doubling after (default 1s)')
    .option(
      '--sandbox-quota-user <size>',
      `sandbox: result bytes one user may keep until they expire (default ${formatSize(DEFAULT_SANDBOX_QUOTA.user)})`,
    )
    .option(
      '--sandbox-quota-total <size>',
      `sandbox: result bytes kept in all (default ${formatSize(DEFAULT_SANDBOX_QUOTA.total)})`,
    )
    .option(
      '--callback-allow <list>',
      `hosts callbacks may go to: comma-separated CIDR ranges, addresses, names, *.domain, or * (default ${DEFAULT_CALLBACK_ALLOW.join(',')} when --host is loopback, else none)`,
    );
}

function upstreamUrl(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash) {
    throw invalidInput(
      `${flag} must be an http or https URL without query or fragment (got "${value}")`,
      `${flag} https://api.provider.example`,
    );
  }
  // fetch sends no credentials from a URL (it fails, naming the URL, to every caller): the key has its own variable
  if (url.username || url.password) {
    throw invalidInput(
      `${flag} must not hold a user or password`,
      `put the provider's key in ${flag === '--img-upstream' ? 'NODEREG_IMG_API_KEY' : 'NODEREG_VID_API_KEY'}`,
    );
  }
  return value;
}

function headerName(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value))
    throw invalidInput(`${flag} must be an HTTP header name such as X-Api-Key (got "${value}")`);
  return value;
}

function quota(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const size = parseSize(value);
  if (size === undefined || size <= 0)
    throw invalidInput(`${flag} must be a size such as 64MiB or 1GiB (got "${value}")`);
  return size;
}

/** The proxy options the flags and env ask for; exit 2 naming the flag for a bad value. */
export function proxyOptionsFromFlags(flags: ProxyFlags, env: NodeJS.ProcessEnv): ProxyOptions {
  const duration = (value: string | undefined, flag: string) =>
    value === undefined ? undefined : parseDuration(value, flag, 'ms');
  let callbackAllow: string[] | undefined;
  if (flags.callbackAllow !== undefined) {
    callbackAllow = flags.callbackAllow
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    const problem = callbackAllow.length ? callbackAllowProblem(callbackAllow) : 'the list is empty';
    if (problem)
      throw invalidInput(
        `--callback-allow: ${problem}`,
        '--callback-allow 127.0.0.0/8,::1,localhost,hooks.example.com (or * for any host)',
      );
  }
  return {
    imgUpstream: upstreamUrl(flags.imgUpstream, '--img-upstream'),
    vidUpstream: upstreamUrl(flags.vidUpstream, '--vid-upstream'),
    imgKey: env.NODEREG_IMG_API_KEY || undefined,
    vidKey: env.NODEREG_VID_API_KEY || undefined,
    imgKeyHeader: headerName(flags.imgUpstreamKeyHeader, '--img-upstream-key-header'),
    vidKeyHeader: headerName(flags.vidUpstreamKeyHeader, '--vid-upstream-key-header'),
    upstreamTimeout: duration(flags.upstreamTimeout, '--upstream-timeout'),
    sandboxDelay: duration(flags.sandboxDelay, '--sandbox-delay'),
    callbackTimeout: duration(flags.callbackTimeout, '--callback-timeout'),
    callbackBackoff: duration(flags.callbackBackoff, '--callback-backoff'),
    callbackAllow,
    sandboxQuotaUser: quota(flags.sandboxQuotaUser, '--sandbox-quota-user'),
    sandboxQuotaTotal: quota(flags.sandboxQuotaTotal, '--sandbox-quota-total'),
  };
}

/** What `serve` says on stderr about the proxy: each provider's mode, and a missing key. */
export function describeProxy(options: ProxyOptions): string[] {
  const lines: string[] = [];
  const one = (what: string, upstream: string | undefined, key: string | undefined, env: string) => {
    if (!upstream) return lines.push(`AI proxy, ${what}: sandbox (offline; nothing is fetched)`);
    lines.push(`AI proxy, ${what}: forwarding to ${upstream}`);
    if (!key) lines.push(`warning: ${env} is not set: the provider will likely refuse requests (502)`);
  };
  one('relight and skin enhancer', options.imgUpstream, options.imgKey, 'NODEREG_IMG_API_KEY');
  one('video extend', options.vidUpstream, options.vidKey, 'NODEREG_VID_API_KEY');
  return lines;
}
