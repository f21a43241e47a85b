import type { Context, MiddlewareHandler } from 'hono';
import { bearerToken, type AppEnv, type Authenticate } from './route.js';
import { HttpError } from './errors.js';
import { bulkNodeVersions } from '../contract/registry.js';
import { clientAddress } from './http/client-address.js';

const MINUTE = 60_000;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** POSTs that only read (the bulk version lookup): not changes, so not limited as changes. */
const READING_POSTS = new Set([bulkNodeVersions.path]);

/**
 * Whose allowance a request spends: its user's (every token of one user, user tokens and the PATs it
 * created, shares one), else its address's (no token, or one that is unknown or revoked: a made-up
 * token buys no allowance of its own). The principal found is kept for the route, which then does not
 * look the token up again.
 */
export async function rateLimitKey(
  c: Context<AppEnv>,
  authenticate: Authenticate,
  address: (c: Context<AppEnv>) => string = clientAddress,
): Promise<string> {
  const token = bearerToken(c);
  const principal = token ? await authenticate(token) : null;
  if (token) c.set('authenticated', { token, principal });
  return principal ? `user:${principal.userId}` : `address:${address(c)}`;
}

export interface RateLimitOptions {
  now?: () => number;
  /** Called on each refusal (the metrics count them). */
  refused?: () => void;
  /** The client's address, whose allowance a request without a user spends. */
  address?: (c: Context<AppEnv>) => string;
  /**
   * On a shared database, its count of a caller's requests in a minute (store countRequest): the limit
   * then holds across every instance, counted in whole minutes rather than in a bucket of this process.
   */
  shared?: (key: string, window: number) => Promise<number>;
}

/** 429 `rate_limited`, retried after `seconds`. */
const overLimit = (perMinute: number, seconds: number) =>
  new HttpError(
    'rate_limited',
    `over the limit of ${perMinute} changes per minute; retry in ${seconds} s`,
    undefined,
    undefined,
    {
      'Retry-After': String(seconds),
    },
  );

/**
 * `--rate-limit N/min`: a token bucket per caller (`rateLimitKey`) refilled at N per minute, for
 * mutating requests only. Over it: 429 `rate_limited` with Retry-After.
 */
export function rateLimit(
  perMinute: number,
  authenticate: Authenticate,
  { now = Date.now, refused, address, shared }: RateLimitOptions = {},
): MiddlewareHandler<AppEnv> {
  if (shared) return sharedRateLimit(perMinute, authenticate, shared, { now, refused, address });
  const buckets = new Map<string, { tokens: number; at: number }>();
  const refill = (bucket: { tokens: number; at: number }, time: number) =>
    Math.min(perMinute, bucket.tokens + ((time - bucket.at) * perMinute) / MINUTE);

  return async (c, next) => {
    if (!MUTATING.has(c.req.method) || READING_POSTS.has(c.req.path)) return next();
    const key = await rateLimitKey(c, authenticate, address);
    const time = now();
    // Full buckets are forgotten, so the map holds only recent callers.
    if (buckets.size > 10_000) for (const [k, b] of buckets) if (refill(b, time) >= perMinute) buckets.delete(k);
    const bucket = buckets.get(key) ?? { tokens: perMinute, at: time };
    bucket.tokens = refill(bucket, time);
    bucket.at = time;
    buckets.set(key, bucket);
    if (bucket.tokens < 1) {
      refused?.();
      throw overLimit(perMinute, Math.max(1, Math.ceil(((1 - bucket.tokens) * MINUTE) / perMinute / 1000)));
    }
    bucket.tokens -= 1;
    return next();
  };
}

/** The limit counted in the database: at most `perMinute` requests per caller in each whole minute. */
function sharedRateLimit(
  perMinute: number,
  authenticate: Authenticate,
  counted: (key: string, window: number) => Promise<number>,
  { now = Date.now, refused, address }: Omit<RateLimitOptions, 'shared'>,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!MUTATING.has(c.req.method) || READING_POSTS.has(c.req.path)) return next();
    const key = await rateLimitKey(c, authenticate, address);
    const time = now();
    const window = Math.floor(time / MINUTE);
    if ((await counted(key, window)) > perMinute) {
      refused?.();
      throw overLimit(perMinute, Math.max(1, Math.ceil(((window + 1) * MINUTE - time) / 1000)));
    }
    return next();
  };
}
