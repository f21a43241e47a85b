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
}

/**
 * `--rate-limit N/min`: a token bucket per caller (`rateLimitKey`) refilled at N per minute, for
 * mutating requests only. Over it: 429 `rate_limited` with Retry-After.
 */
export function rateLimit(
  perMinute: number,
  authenticate: Authenticate,
  { now = Date.now, refused, address }: RateLimitOptions = {},
): MiddlewareHandler<AppEnv> {
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
      const seconds = Math.max(1, Math.ceil(((1 - bucket.tokens) * MINUTE) / perMinute / 1000));
      throw new HttpError(
        'rate_limited',
        `over the limit of ${perMinute} changes per minute; retry in ${seconds} s`,
        undefined,
        undefined,
        {
          'Retry-After': String(seconds),
        },
      );
    }
    bucket.tokens -= 1;
    return next();
  };
}
