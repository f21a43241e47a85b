// How the CLI checks a request it builds, free of zod at run time: with checks generated from the
// contract's schemas at build time (scripts/request-checks.js). A request they pass is the one zod's
// parse outputs; for one they refuse, the operation's worded checks (operation-checks.ts) say why.
import type { CheckError } from './check-words.js';
import * as generated from './generated/requests.js';

/**
 * A generated check of `{ value: request }`: true when the request meets the schema; `value` becomes
 * its output. When it is false, `errors` holds its refusal (check-words.ts words it).
 */
export type RequestCheck = ((data: unknown) => boolean) & { errors?: CheckError[] | null };

/**
 * `request` as the contract's schema `id` outputs it (defaults, transforms, its keys in the schema's
 * order) when the schema accepts it; undefined when it does not, or when it holds what JSON cannot
 * (a date of a TOML file, NaN…), which the caller leaves to zod. `request` itself is left as it is.
 */
export function checkRequest<T>(id: 'PublishBody', request: unknown): T | undefined {
  if (!isJson(request)) return undefined;
  const holder = { value: structuredClone(request) };
  return generated[id](holder) ? (holder.value as T) : undefined;
}

/** Plain JSON data: what the generated checks are proved on (test/contract/requests.test.ts). */
function isJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && Object.values(value).every(isJson);
}
