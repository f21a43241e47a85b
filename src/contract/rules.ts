// The rules of the wire that JSON Schema cannot say (refinements and transforms), as plain functions
// under a name. The contract's zod schemas run them (`rule` and `transform` in fields.ts); the request
// checks generated from those schemas (scripts/request-checks.js) call them by the same name, so that a
// valid request is checked without loading zod (contract/requests.ts). The rules that read a version range
// are in version-range.ts. Free of zod.
import { type Issue, issueMessage } from './issue-words.js';
import { isReservedNodeId, MEDIA_URL_MAX, RELIGHT, SEARCH_TERMS_MAX, searchTerms, TRANSLATIONS } from './limits.js';
import { isHttpUrl } from './url.js';
import { normalizeVersion } from './version.js';

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
  notReserved: (id: string) => !isReservedNodeId(id),
  fewLanguages: (value: object) => Object.keys(value).length <= TRANSLATIONS.maxLanguages,
  smallAsJson: (value: object) => JSON.stringify(value).length <= TRANSLATIONS.maxJsonLength,
  fewSearchTerms: (q: string) => searchTerms(q).length <= SEARCH_TERMS_MAX,
  /** A callback a publisher's webhook is POSTed to. */
  webhookUrl: (text: string) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol),
  /** Base64 content, or a URL of at most MEDIA_URL_MAX characters. */
  shortMediaUrl: (value: string) => value.length <= MEDIA_URL_MAX || !/^\s*https?:/i.test(value),
  namesUser: (body: { user?: unknown; user_id?: unknown }) => body.user !== undefined || body.user_id !== undefined,
  oneLightSource: (body: Record<string, unknown>) =>
    body.transfer_light_from_lightmap === undefined || body.transfer_light_from_reference_image === undefined,
  videoUrlWithId: (body: Record<string, unknown>) =>
    body.video_creation_id === undefined || body.video_url !== undefined,
  videoIdWithUrl: (body: Record<string, unknown>) =>
    body.video_url === undefined || body.video_creation_id !== undefined,
};

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

/**
 * Checks the weight syntax of a relight prompt. A group `(text:w)` weights `text` by `w`:
 * `text` holds no `(`, `)` or `:`, `w` is a decimal with at most two places, 1 ≤ w ≤ 1.4.
 * Parentheses without `:w` are plain text; nested or malformed groups are errors.
 * Returns the first problem found, or null.
 */
export function promptWeightProblem(prompt: string): string | null {
  const { min, max, maxDecimals } = RELIGHT.promptWeight;
  const group = new RegExp(`^[^():]+:(\\d+(?:\\.\\d{1,${maxDecimals}})?)$`);
  // One pass, and only weighted groups (which never overlap) are sliced: linear in the prompt's length.
  const open: number[] = [];
  let lastOpen = -1;
  let lastColon = -1;
  for (let i = 0; i < prompt.length; i++) {
    const char = prompt[i];
    if (char === ':') lastColon = i;
    if (char === '(') open.push((lastOpen = i));
    if (char !== ')') continue;
    const start = open.pop();
    if (start === undefined) continue; // a stray ")" is plain text
    if (lastColon < start) continue; // parentheses without a weight are plain text
    if (lastOpen > start || open.length > 0) return `nested weighted group at character ${start + 1}`;
    const inner = prompt.slice(start + 1, i);
    const match = group.exec(inner);
    if (!match) return `malformed weighted group "(${inner})": write (text:weight) with a weight like 1.2`;
    const weight = Number(match[1]);
    if (weight < min || weight > max) return `weight ${match[1]} of "(${inner})" must be from ${min} to ${max}`;
  }
  if (open.length > 0 && lastColon > open[0]) return `unclosed weighted group at character ${open[0] + 1}`;
  return null;
}

/** The issues of a value out of `[min, max]`, worded as the contract's error map words zod's. */
function sizeIssues(size: number, origin: 'string' | 'number', input: unknown, min: number, max: number) {
  const issue: Issue | undefined =
    size < min
      ? { code: 'too_small', origin, minimum: min, inclusive: true, input }
      : size > max
        ? { code: 'too_big', origin, maximum: max, inclusive: true, input }
        : undefined;
  return issue ? [{ path: [], input, message: issueMessage(issue) ?? 'is out of bounds' }] : [];
}

/** Transforms: the value a schema outputs for one it accepted, with the issues found on the way. */
export const TRANSFORMS = {
  /** A version as publishers write it, as the registry stores it (contract/version.ts). */
  semver: (value: string) => ({ value: normalizeVersion(value)!.version, issues: [] as TransformIssue[] }),
  lowercase: (value: string) => ({ value: value.toLowerCase(), issues: [] as TransformIssue[] }),
  incumbent: asOurs,
  /** A whole number a query string spells in plain digits (the schema's pattern), within bounds. */
  queryInteger: (value: string, { min, max }: { min: number; max: number }) => {
    const number = Number(value);
    return { value: number, issues: sizeIssues(number, 'number', value, min, max) };
  },
  /** A message written by a person: without the blanks around it, not empty, at most `max` characters. */
  message: (value: string, { max }: { max: number }) => {
    const trimmed = value.trim();
    const issues = trimmed === '' ? [{ path: [], input: value, message: 'must not be empty' }] : [];
    return {
      value: trimmed,
      issues: issues.length ? issues : sizeIssues(codePoints(trimmed), 'string', value, 1, max),
    };
  },
  /** A relight prompt whose weighted groups are well formed (promptWeightProblem). */
  promptWeights: (value: string) => {
    const problem = promptWeightProblem(value);
    return { value, issues: problem ? [{ path: [], input: value, message: problem }] : [] };
  },
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
