// Checks of the values of serve's flags: each names its flag and shows a value that works.
import { parseSize } from '../../shared/size.js';
import { DEFAULT_PG_POOL, MAX_PG_POOL } from '../../shared/tuning.js';
import { withoutUrlSecrets } from '../../shared/url.js';
import { invalidInput } from '../errors.js';
import { CAP_WORDS, type CreationCaps } from '../../server/services/creation-caps.js';
import type { BlockList } from 'node:net';
import { trustedProxies } from '../../server/http/client-address.js';
import type { UploadLimits } from '../../server/services/upload-slots.js';
import { parseDuration } from '../duration.js';

export function parsePort(text: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65535))
    throw invalidInput(`--port must be a port number from 0 to 65535 (got "${text}")`, '--port 0 picks a free port');
  return port;
}

export function parseSizeFlag(flag: string, text: string): number {
  const size = parseSize(text);
  if (size === undefined || size <= 0)
    throw invalidInput(`${flag} must be a size such as 200MiB, 500kB or 1048576 (got "${text}")`);
  return size;
}

export function parseRateLimit(text: string): number {
  const match = /^\s*(\d{1,9})\s*(?:\/\s*min)?\s*$/.exec(text);
  const limit = match ? Number(match[1]) : 0;
  if (!limit) throw invalidInput(`--rate-limit must be requests per minute such as 60/min (got "${text}")`);
  return limit;
}

export function parsePgPool(text: string): number {
  const pool = /^\s*\d{1,9}\s*$/.test(text) ? Number(text) : 0;
  if (!(pool >= 1 && pool <= MAX_PG_POOL))
    throw invalidInput(
      `--pg-pool must be a number of connections from 1 to ${MAX_PG_POOL} (got "${text}")`,
      `--pg-pool ${DEFAULT_PG_POOL}`,
    );
  return pool;
}

export function parsePublicUrl(text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    // reported below
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash) {
    throw invalidInput(
      `--public-url must be an http or https URL without query or fragment (got "${text}")`,
      '--public-url https://registry.example.com',
    );
  }
  // Every download and upload URL, and /openapi.json, are built on it and shown to anyone.
  if (url.username || url.password) {
    throw invalidInput(
      `--public-url must not hold a user name or password: every download URL and /openapi.json would show it to anyone (got "${withoutUrlSecrets(text)}")`,
      '--public-url https://registry.example.com',
    );
  }
  return text.replace(/\/+$/, '');
}

export function parseHost(text: string): string {
  if (!text.trim()) throw invalidInput('--host must not be empty', '--host 127.0.0.1');
  return text;
}

/** `--caps publishers=20,nodes=500,pending=100,invitations=50`: the caps given, each a whole number from 1. */
export function parseCaps(text: string): Partial<CreationCaps> {
  const caps: Partial<CreationCaps> = {};
  const words = Object.keys(CAP_WORDS).join(', ');
  for (const part of text.split(',')) {
    const match = /^\s*([a-z]+)\s*=\s*(\d{1,9})\s*$/.exec(part);
    const field = match ? CAP_WORDS[match[1]] : undefined;
    if (!match || !field || Number(match[2]) < 1)
      throw invalidInput(`--caps takes WORD=N pairs, N from 1, WORD one of ${words} (got "${part.trim()}")`);
    caps[field] = Number(match[2]);
  }
  return caps;
}

export function parseTrustProxy(text: string): BlockList {
  try {
    return trustedProxies(text.split(','));
  } catch (error) {
    throw invalidInput(`--trust-proxy: ${(error as Error).message}`);
  }
}

/** A whole number of uploads from 1 (`--uploads-per-version`, `--uploads-per-publisher`). */
function parseCount(flag: string, text: string): number {
  const count = /^\d{1,6}$/.test(text.trim()) ? Number(text) : 0;
  if (count < 1) throw invalidInput(`${flag} must be a whole number from 1 (got "${text}")`, `${flag} 4`);
  return count;
}

/** The caps on uploads in progress and the least rate of an upload's body. */
export function parseUploadLimits(flags: {
  uploadsPerVersion: string;
  uploadsPerPublisher: string;
  uploadMinRate: string;
  uploadGrace: string;
}): UploadLimits {
  const minRate = flags.uploadMinRate.trim() === '0' ? 0 : parseSizeFlag('--upload-min-rate', flags.uploadMinRate);
  const graceMs = parseDuration(flags.uploadGrace, '--upload-grace');
  if (graceMs < 1000)
    throw invalidInput(`--upload-grace must be at least 1s (got "${flags.uploadGrace}")`, '--upload-grace 30s');
  return {
    perVersion: parseCount('--uploads-per-version', flags.uploadsPerVersion),
    perPublisher: parseCount('--uploads-per-publisher', flags.uploadsPerPublisher),
    minRate,
    graceMs,
  };
}
