import { BlockList, isIP } from 'node:net';
import { DEFAULT_SANDBOX_QUOTA } from '../../shared/tuning.js';

/** How the AI proxy runs; every field optional (`serve` flags map onto it). DESIGN.md §4. */
export interface ProxyOptions {
  /** Forward mode for relight and skin enhancer when set; sandbox otherwise. */
  imgUpstream?: string;
  /** Forward mode for video extend when set; sandbox otherwise. */
  vidUpstream?: string;
  /** Provider keys (`serve` reads NODEREG_IMG_API_KEY / NODEREG_VID_API_KEY). */
  imgKey?: string;
  vidKey?: string;
  /** Header carrying the key; `Authorization` (the default) sends `Bearer KEY`, any other sends KEY bare. */
  imgKeyHeader?: string;
  vidKeyHeader?: string;
  /** ms the provider has to answer (default 30 s); then 504. */
  upstreamTimeout?: number;
  /** ms between polls of the provider while a task with a callback is young (default 2 s); `pollSpacing` widens it with age. */
  upstreamPollInterval?: number;
  /** Sandbox: ms from submission to the final state (default 1500), split evenly across the states. */
  sandboxDelay?: number;
  /** ms a callback receiver has to answer (default 5 s). */
  callbackTimeout?: number;
  /** ms before the first retry of a callback, doubling after (default 1 s). */
  callbackBackoff?: number;
  /**
   * Hosts callbacks may go to: CIDR ranges, IPs, host names, `*.domain`, or `*` for all. Default:
   * loopback when the server listens on loopback, else none (`defaultCallbackAllow`).
   */
  callbackAllow?: string[];
  /** ms sandbox result files are kept (default 24 h). */
  resultTtl?: number;
  /** Bytes of unexpired sandbox result files one user may keep (default DEFAULT_SANDBOX_QUOTA.user). */
  sandboxQuotaUser?: number;
  /** Bytes of unexpired sandbox result files kept in all (default DEFAULT_SANDBOX_QUOTA.total). */
  sandboxQuotaTotal?: number;
}

export const DEFAULT_CALLBACK_ALLOW = ['127.0.0.0/8', '::1', 'localhost'];

/** Whether a listening host (`--host`) is a loopback interface only. */
export function isLoopbackHost(host: string): boolean {
  return callbackHostAllowed(DEFAULT_CALLBACK_ALLOW)(`http://${isIP(host) === 6 ? `[${host}]` : host}/`);
}

/**
 * The callback allow-list when `--callback-allow` is not given. Loopback receivers are allowed only
 * when the server itself listens on loopback: reachable from elsewhere (`--host 0.0.0.0`), any user
 * could otherwise make it POST to services bound to its own loopback ports.
 */
export function defaultCallbackAllow(host: string): string[] {
  return isLoopbackHost(host) ? DEFAULT_CALLBACK_ALLOW : [];
}
/**
 * When a forward task with a callback is polled again: every `interval` while it is young, then a tenth of
 * its age, at most 30 intervals apart. A task the provider never finishes then costs ~1,500 polls in the
 * 24 h it is watched (2 s interval), not 43,200, while one that finishes in seconds is seen at once.
 */
export function pollSpacing(ageMs: number, interval: number): number {
  return Math.min(interval * 30, Math.max(interval, Math.floor(ageMs / 10)));
}

/** Retries after the first attempt of a callback delivery. */
export const CALLBACK_RETRIES = 3;

export type ResolvedProxyOptions = Required<Omit<ProxyOptions, 'imgUpstream' | 'vidUpstream' | 'imgKey' | 'vidKey'>> &
  Pick<ProxyOptions, 'imgUpstream' | 'vidUpstream' | 'imgKey' | 'vidKey'>;

/** The options with their defaults; `host` is the listening address (the callback default follows it). */
export function resolveProxyOptions(options: ProxyOptions = {}, host = '127.0.0.1'): ResolvedProxyOptions {
  const trim = (url?: string) => (url ? url.replace(/\/+$/, '') : undefined);
  return {
    imgKeyHeader: 'Authorization',
    vidKeyHeader: 'Authorization',
    upstreamTimeout: 30_000,
    upstreamPollInterval: 2_000,
    sandboxDelay: 1_500,
    callbackTimeout: 5_000,
    callbackBackoff: 1_000,
    callbackAllow: defaultCallbackAllow(host),
    resultTtl: 24 * 60 * 60 * 1000,
    sandboxQuotaUser: DEFAULT_SANDBOX_QUOTA.user,
    sandboxQuotaTotal: DEFAULT_SANDBOX_QUOTA.total,
    ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)),
    imgUpstream: trim(options.imgUpstream),
    vidUpstream: trim(options.vidUpstream),
  };
}

/** Decides whether a callback URL's host is allowed by the `--callback-allow` list. */
export function callbackHostAllowed(allow: readonly string[]): (url: string) => boolean {
  if (allow.includes('*')) return () => true;
  const ranges = new BlockList();
  const names: string[] = [];
  for (const entry of allow) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address);
    if (family && prefix !== undefined) ranges.addSubnet(address, Number(prefix), family === 6 ? 'ipv6' : 'ipv4');
    else if (family) ranges.addAddress(address, family === 6 ? 'ipv6' : 'ipv4');
    else names.push(entry.toLowerCase());
  }
  return (url: string) => {
    let host: string;
    try {
      host = new URL(url).hostname.toLowerCase();
    } catch {
      return false;
    }
    const address = host.replace(/^\[|\]$/g, '');
    const family = isIP(address);
    if (family) return ranges.check(address, family === 6 ? 'ipv6' : 'ipv4');
    const name = host.replace(/\.$/, '');
    return names.some((allowed) => (allowed.startsWith('*.') ? name.endsWith(allowed.slice(1)) : name === allowed));
  };
}

/** Checks a `--callback-allow` list; returns the first bad entry's problem, or null. */
export function callbackAllowProblem(allow: readonly string[]): string | null {
  for (const entry of allow) {
    if (entry === '*') continue;
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address);
    if (prefix !== undefined) {
      const bits = Number(prefix);
      if (!family || extra !== undefined || !/^\d+$/.test(prefix) || bits > (family === 6 ? 128 : 32)) {
        return `"${entry}" is not a CIDR range like 10.0.0.0/8`;
      }
    } else if (!family && !/^(\*\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(entry)) {
      return `"${entry}" is not a host name, IP address, CIDR range or *`;
    }
  }
  return null;
}
