// The rules of the wire that JSON Schema cannot say (refinements and transforms), as plain functions
// under a name. The contract's zod schemas run them (`rule` and `transform` in fields.ts); the request
// checks generated from those schemas (scripts/request-checks.js) call them by the same name, so that a
// valid request is checked without loading zod (contract/requests.ts). Free of zod.
import validRange from 'semver/ranges/valid.js';
import { isReservedNodeId, TRANSLATIONS } from './limits.js';
import { isHttpUrl } from './url.js';
import { normalizeVersion } from './version.js';

/**
 * Reads a version requirement as a semver range: `>=1.0.0`, `>=1.0.0 <2.0.0`, `^1.2`, `*`; parts may
 * also be separated by commas and `==` is taken as `=`, as Python writes them. Undefined when it is none.
 */
export function versionRange(value: string): string | undefined {
  const normalised = value
    .replace(/==/g, '=')
    .replace(/\s*,\s*/g, ' ')
    .trim();
  return validRange(normalised) ?? undefined;
}

/** A string's length in code points, as zod measures strings (a surrogate pair counts once): the generated checks' `maxLength`. */
export function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Refinements: whether a value the schema's type already accepts keeps the rule. */
export const RULES = {
  httpUrl: (value: string) => isHttpUrl(value),
  urlOrEmpty: (value: string) => value === '' || isHttpUrl(value),
  versionRangeOrEmpty: (value: string) => value === '' || versionRange(value) !== undefined,
  notReserved: (id: string) => !isReservedNodeId(id),
  fewLanguages: (value: object) => Object.keys(value).length <= TRANSLATIONS.maxLanguages,
  smallAsJson: (value: object) => JSON.stringify(value).length <= TRANSLATIONS.maxJsonLength,
};
export type RuleName = keyof typeof RULES;

/** A problem a transform finds, as zod reports it: under `path`, below the value transformed. */
export interface TransformIssue {
  path: string[];
  input: unknown;
  message: string;
}

/** What the incumbent client names otherwise in a body: its names of our fields, and the optional strings it sends "" in. */
export interface IncumbentNames {
  /** [its name, ours] */
  aliases: [string, string][];
  /** Optional string fields: "" in them is unset, read as not sent (null clears). */
  emptyIsUnset: string[];
}

/**
 * A body as the incumbent client writes it, read as ours: each alias becomes our name (an alias and
 * our name with different values is an issue naming the alias), "" for an optional string is not sent.
 */
function asOurs(
  body: Record<string, unknown>,
  { aliases, emptyIsUnset }: IncumbentNames,
): { value: Record<string, unknown>; issues: TransformIssue[] } {
  const out: Record<string, unknown> = { ...body };
  const issues: TransformIssue[] = [];
  for (const [alias, ours] of aliases) {
    const value = out[alias];
    delete out[alias];
    if (value === undefined) continue;
    if (out[ours] !== undefined && JSON.stringify(out[ours]) !== JSON.stringify(value)) {
      issues.push({
        path: [alias],
        input: value,
        message: `differs from ${ours}, which names the same field: send one of them`,
      });
    }
    out[ours] = value;
  }
  for (const field of emptyIsUnset) if (out[field] === '') delete out[field];
  return { value: out, issues };
}

/** Transforms: the value a schema outputs for one it accepted, with the issues found on the way. */
export const TRANSFORMS = {
  /** A version as publishers write it, as the registry stores it (contract/version.ts). */
  semver: (value: string) => ({ value: normalizeVersion(value)!.version, issues: [] as TransformIssue[] }),
  lowercase: (value: string) => ({ value: value.toLowerCase(), issues: [] as TransformIssue[] }),
  incumbent: asOurs,
};
export type TransformName = keyof typeof TRANSFORMS;
export type TransformArgs<N extends TransformName> = Parameters<(typeof TRANSFORMS)[N]>[1];

/** Runs the transform `name` on a value its schema accepted. */
export const runTransform = (name: TransformName, value: unknown, args?: unknown) =>
  (TRANSFORMS[name] as (value: unknown, args: unknown) => { value: unknown; issues: TransformIssue[] })(value, args);

/** What a generated check does to a value it accepted, as zod's parse does (the keyword `x-output`). */
export interface Output {
  /** An object's keys in the schema's order: zod's output holds those given, in that order, and no other. */
  keys?: string[];
  transform?: [TransformName, unknown?];
}

/** The value a generated check outputs for one it accepted; Refused when its transform found an issue. */
export function output(value: unknown, { keys, transform }: Output): unknown {
  let out = value;
  if (keys) {
    const given = value as Record<string, unknown>;
    out = Object.fromEntries(keys.filter((key) => key in given).map((key) => [key, given[key]]));
  }
  if (!transform) return out;
  const result = runTransform(transform[0], out, transform[1]);
  return result.issues.length ? new Refused(result.issues) : result.value;
}

/** What `output` gives for a value whose transform found issues: the check refuses it, worded by the first. */
export class Refused {
  constructor(readonly issues: TransformIssue[]) {}
}
