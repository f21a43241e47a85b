// The field rules the resource schemas share, and the way the incumbent client writes a body.
import * as z from 'zod';
import { NODE_ID, PAGE, PUBLISHER_ID, VERSION_MAX } from '../limits.js';
import { documented, rule, transform } from '../fields.js';
import { VERSION_INPUT_PATTERN } from '../version.js';

// ---------- shared field rules ----------

export const nodeId = rule(
  z
    .string()
    .min(1)
    .max(NODE_ID.maxLength)
    .regex(
      new RegExp(NODE_ID.pattern),
      'must be letters, digits, ".", "_" or "-", starting and ending with a letter or digit',
    ),
  'notReserved',
  'is reserved, by the registry or by Windows for a device (CON, NUL, COM1…), where a node is installed into a folder of that name: choose another id',
);
export const publisherId = z.string().regex(new RegExp(PUBLISHER_ID.pattern), PUBLISHER_ID.message);
/**
 * A version as publishers write it, stored as semver: `v1.2.3` → `1.2.3`, `1.0` and `1` → `1.0.0`,
 * build metadata dropped (`1.2.3+cu121` → `1.2.3`).
 */
export const semver = transform(
  z
    .string()
    .max(VERSION_MAX, { abort: true })
    .regex(
      new RegExp(VERSION_INPUT_PATTERN),
      'must be a version such as 1.2.3, 1.2 or 1.2.3-beta.1, its numbers at most 15 digits',
    ),
  'semver',
);
export const isoDate = z.string();
/** An archive's SHA-256: 64 hex characters, kept in lowercase. */
export const sha256Hex = transform(
  z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be the SHA-256 of the archive as 64 hex characters'),
  'lowercase',
);
export const strings = z.array(z.string());
/**
 * A string field that answers always carry, "" when unset: clients of the hosted registry index
 * them directly (DESIGN.md §11). Parsed leniently: a server that leaves one out reads as "".
 */
export const answered = z.string().default('');
/** The fields of a resource schema that answers always carry (the views fill them). */
export const answeredFields = (schema: z.ZodObject) =>
  Object.keys(schema.shape).filter((key) => schema.shape[key] === answered);
/** A list answers always carry, [] when empty (DESIGN.md §12); parsed leniently like `answered`. */
export const answeredList = strings.default([]);
/** The fields of a resource schema whose answers always carry a list. */
export const answeredListFields = (schema: z.ZodObject) =>
  Object.keys(schema.shape).filter((key) => schema.shape[key] === answeredList);
/**
 * The hosted registry's name of one of our fields, sent beside ours with the same value (DESIGN.md §12):
 * the field's clients read those names. Ours is canonical.
 */
export const hostedName = <T extends z.ZodType>(schema: T, ours: string) =>
  schema.meta({ deprecated: true, description: `the hosted registry's name of ${ours}, always the same value` });

// Updates are partial: an absent field is left as it is, `null` clears an optional one.
export const clearable = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

// ---------- how the incumbent client writes a body ----------

/**
 * The hosted registry names some fields after the host application, and the incumbent client sends
 * those names: accepted on input as deprecated aliases of ours; answers and OpenAPI use ours.
 */
export const HOST_APP_ALIASES = {
  supported_comfyui_version: 'supported_appui_version',
  supported_comfyui_frontend_version: 'supported_appui_frontend_version',
  preempted_comfy_node_names: 'preempted_app_node_names',
  github_stars: 'repohost_stars',
  comfy_node_extract_status: 'app_node_extract_status',
} as const;
/**
 * An optional string field (a URL, a version requirement, a text): `""` in it is unset, read as not
 * sent, so the registry keeps what it has; `null` clears it (docs/decisions.md, 2026-12-07). The
 * incumbent sends "" for a field it has no value for, which must not wipe what is stored.
 */
const isOptionalString = (field: z.ZodType, optional = false): boolean =>
  field instanceof z.ZodOptional || field instanceof z.ZodNullable
    ? isOptionalString(field.unwrap() as z.ZodType, true)
    : optional && field instanceof z.ZodString;

/**
 * A body schema that also takes the incumbent's way of writing it: the aliases of its fields (in
 * OpenAPI as deprecated properties) read as our names, "" for an optional string read as not sent. An
 * alias and our name with different values is an error naming both.
 */
export function asIncumbentSends<S extends z.ZodRawShape>(schema: z.ZodObject<S>) {
  const emptyIsUnset = Object.keys(schema.shape).filter((key) => isOptionalString(schema.shape[key] as z.ZodType));
  const aliases = Object.entries(HOST_APP_ALIASES).filter(([, ours]) => ours in schema.shape);
  const aliasFields = Object.fromEntries(
    aliases.map(([alias, ours]) => [
      alias,
      (schema.shape[ours] as z.ZodType).meta({ deprecated: true, description: `deprecated input name of ${ours}` }),
    ]),
  );
  const extended = schema.extend(aliasFields);
  return transform<typeof extended, 'incumbent', z.output<z.ZodObject<S>>>(extended, 'incumbent', {
    aliases,
    emptyIsUnset,
  });
}

// ---------- query strings ----------

/** A whole number from a query string, in plain decimal digits (no `0x10`, `1e1` or spaces), within bounds. */
export function queryInteger(min: number, max = Number.MAX_SAFE_INTEGER) {
  const digits = z
    .string({ error: (issue) => (issue.input === undefined ? 'is required: a whole number, such as 3' : undefined) })
    .regex(/^-?\d{1,15}$/, 'must be a whole number (no decimals), such as 3');
  return documented(transform<typeof digits, 'queryInteger', number>(digits, 'queryInteger', { min, max }), {
    outputs: z.number().int().min(min).max(max),
  });
}

export const pageNumber = queryInteger(PAGE.min).prefault(String(PAGE.min));
export const pageLimit = queryInteger(PAGE.limitMin, PAGE.limitMax).prefault(String(PAGE.defaultLimit));
