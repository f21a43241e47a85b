// Field rules shared by many bodies: bounded text and lists, URLs, version ranges, translations.
// Every string and array a request may carry is bounded here, so that what a request costs to parse,
// validate, store and list again is bounded too (RELIABILITY.md, "Bounded work per request").
import * as z from 'zod';
import { TRANSLATIONS, URL_MAX, VERSION_RANGE_MAX } from './limits.js';
import { RULES, runTransform, type TransformArgs, type TransformName } from './rules.js';
import { RANGE_RULES } from './version-range.js';
import './messages.js'; // the contract's error map, for every schema

export { versionRange } from './version-range.js';

/** Every refinement by its name: those of rules.ts and those that read a version range. */
const NAMED_RULES = { ...RULES, ...RANGE_RULES };
type RuleName = keyof typeof NAMED_RULES;

/**
 * The refinements and transforms of the schemas, by their names in rules.ts and version-range.ts: the
 * request checks are generated from the schemas with them (scripts/request-checks.js refuses a
 * refinement or a transform it finds no name for).
 */
export const namedRules = z.registry<{ rules?: RuleName[]; transform?: [TransformName, unknown?] }>();

/** `schema` refined with the rule `name` of rules.ts; `path`: the field the refusal names, below the value refined. */
export function rule<T extends z.ZodType>(schema: T, name: RuleName, message: string, path?: string[]): T {
  const refined = schema.refine(NAMED_RULES[name] as (value: unknown) => boolean, path ? { message, path } : message);
  namedRules.add(refined, { rules: [...(namedRules.get(schema)?.rules ?? []), name] });
  return refined;
}

/** `schema` transformed by `name` of rules.ts; the issues it finds are zod's issues. */
export function transform<T extends z.ZodType, N extends TransformName, O = z.output<T>>(
  schema: T,
  name: N,
  ...args: TransformArgs<N> extends undefined ? [] : [TransformArgs<N>]
) {
  const piped = schema.transform((value, ctx) => {
    const result = runTransform(name, value, args[0]);
    for (const issue of result.issues) ctx.issues.push({ code: 'custom', ...issue });
    return result.value as O;
  });
  namedRules.add(piped, { transform: args.length ? [name, args[0]] : [name] });
  return piped;
}

/**
 * How the OpenAPI document shows a transform, which JSON Schema cannot derive from it: what its input must
 * be (when the transform checks more than its input schema says), and what it outputs.
 */
export const shownAs = z.registry<{ inputs?: unknown; outputs?: unknown }>();

/** `schema` (a transform), shown in the OpenAPI document as `shown` says. */
export function documented<T extends z.ZodType>(schema: T, shown: { inputs?: z.ZodType; outputs?: z.ZodType }): T {
  shownAs.add(schema, shown);
  return schema;
}

export const text = (max: number) => z.string().max(max);

/** A list of short strings: at most `maxItems` items of at most `maxLength` characters. */
export const list = ({ maxItems, maxLength }: { maxItems: number; maxLength: number }) =>
  z.array(z.string().max(maxLength)).max(maxItems);

const HTTP_URL_RULE = 'must be an absolute http:// or https:// URL, such as https://example.com/page';

/** An absolute http(s) URL, as callbacks need. */
export const httpUrl = rule(z.string().max(URL_MAX, { abort: true }), 'httpUrl', HTTP_URL_RULE);

/** A URL field of the metadata: an http(s) URL, or the empty string, which means "unset". */
export const urlField = rule(
  z.string().max(URL_MAX, { abort: true }),
  'urlOrEmpty',
  `${HTTP_URL_RULE} (or "" for none)`,
);

/** A version requirement field: a range of versions (see versionRange), or "" for none. */
export const versionRangeField = rule(
  z.string().max(VERSION_RANGE_MAX, { abort: true }),
  'versionRangeOrEmpty',
  'must be a version range such as >=1.0.0 or >=1.0.0 <2.0.0 (or "" for none)',
);

/**
 * Translations of the metadata, by language: `{"fr": {"name": "…"}}`. The inside of each language is
 * left to the client (the interface does not show it), so the whole is bounded by its JSON size.
 */
export const translations = rule(
  rule(
    z.record(z.string().max(TRANSLATIONS.languageMaxLength), z.unknown()),
    'fewLanguages',
    `must hold at most ${TRANSLATIONS.maxLanguages} languages`,
  ),
  'smallAsJson',
  `must be at most ${TRANSLATIONS.maxJsonLength} characters as JSON`,
);

/**
 * Query parameters that may be given more than once (`?node_id=a&node_id=b`): the server reads every
 * value of these, and the first of any other.
 */
export const REPEATED_PARAMS = new Set<z.ZodType>();
export function repeated<T extends z.ZodType>(item: T, maxItems: number, description: string) {
  const list = z.array(item).max(maxItems).optional();
  const schema = z
    .preprocess((value) => (value === undefined || Array.isArray(value) ? value : [value]), list)
    .describe(description);
  REPEATED_PARAMS.add(schema);
  return schema;
}
