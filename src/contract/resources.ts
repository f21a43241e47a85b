import * as z from 'zod';
import {
  DESCRIPTION_MAX, CHANGELOG_MAX, DEPENDENCIES, IDENTIFIER_MAX, IMAGE_TASK_STATUS, MEMBER_ROLES, NAME_MAX, NODE_ID, NODE_NAMES,
  NODE_STATUS, NODE_VERSION_STATUS, PAGE, PLATFORMS, PUBLISHER_ID, PUBLISHER_STATUS,
  SHORT_TEXT_MAX, TAGS, USER_REF_MAX, VERSION_MAX, VIDEO_TASK_STATE,
} from './limits.js';
import { Finding } from './scan.js';
import { list, rule, text, transform, translations, urlField, versionRangeField } from './fields.js';
import { VERSION_INPUT_PATTERN } from './version.js';

// ---------- shared field rules ----------

export const nodeId = rule(
  z
    .string()
    .min(1)
    .max(NODE_ID.maxLength)
    .regex(new RegExp(NODE_ID.pattern), 'must be letters, digits, ".", "_" or "-", starting and ending with a letter or digit'),
  'notReserved',
  'is reserved, by the registry or by Windows for a device (CON, NUL, COM1…), where a node is installed into a folder of that name: choose another id',
);
export const publisherId = z.string().regex(new RegExp(PUBLISHER_ID.pattern), PUBLISHER_ID.message);
/**
 * A version as publishers write it, stored as semver: `v1.2.3` → `1.2.3`, `1.0` and `1` → `1.0.0`,
 * build metadata dropped (`1.2.3+cu121` → `1.2.3`).
 */
export const semver = transform(
  z.string().max(VERSION_MAX, { abort: true }).regex(new RegExp(VERSION_INPUT_PATTERN), 'must be a version such as 1.2.3, 1.2 or 1.2.3-beta.1, its numbers at most 15 digits'),
  'semver',
);
export const isoDate = z.string();
/** An archive's SHA-256: 64 hex characters, kept in lowercase. */
export const sha256Hex = transform(z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be the SHA-256 of the archive as 64 hex characters'), 'lowercase');
const strings = z.array(z.string());
/**
 * A string field that answers always carry, "" when unset: clients of the hosted registry index
 * them directly (DESIGN.md §11). Parsed leniently: a server that leaves one out reads as "".
 */
const answered = z.string().default('');
/** The fields of a resource schema that answers always carry (the views fill them). */
const answeredFields = (schema: z.ZodObject) => Object.keys(schema.shape).filter((key) => schema.shape[key] === answered);
/** A list answers always carry, [] when empty (DESIGN.md §12); parsed leniently like `answered`. */
const answeredList = strings.default([]);
/** The fields of a resource schema whose answers always carry a list. */
const answeredListFields = (schema: z.ZodObject) => Object.keys(schema.shape).filter((key) => schema.shape[key] === answeredList);
/**
 * The hosted registry's name of one of our fields, sent beside ours with the same value (DESIGN.md §12):
 * the field's clients read those names. Ours is canonical.
 */
const hostedName = <T extends z.ZodType>(schema: T, ours: string) =>
  schema.meta({ deprecated: true, description: `the hosted registry's name of ${ours}, always the same value` });

// ---------- resources as the server answers them (parsed leniently: unknown fields kept) ----------

export const NodeVersion = z.looseObject({
  id: z.string(),
  node_id: z.string().optional(),
  version: z.string(),
  changelog: answered,
  app_node_extract_status: answered,
  createdAt: isoDate.optional(),
  dependencies: answeredList,
  deprecated: z.boolean().default(false),
  downloadUrl: z.string().optional(),
  status: z.enum(NODE_VERSION_STATUS).optional(),
  status_reason: answered,
  supported_accelerators: answeredList,
  supported_appui_frontend_version: answered,
  supported_appui_version: answered,
  supported_os: answeredList,
  tags: answeredList,
  tags_admin: answeredList,
  // the hosted registry's names (HOST_APP_ALIASES)
  comfy_node_extract_status: hostedName(z.string().default(''), 'app_node_extract_status'),
  supported_comfyui_frontend_version: hostedName(z.string().default(''), 'supported_appui_frontend_version'),
  supported_comfyui_version: hostedName(z.string().default(''), 'supported_appui_version'),
  // extensions of ours
  archive_sha256: z.string().optional(),
  archive_size: z.number().int().optional(),
  /** Why the node-class extraction is not `success`, for the publisher to act on. */
  app_node_extract_reason: z.string().optional(),
  /** What the registry's scan found in the archive: only for the node's publisher members and admins. */
  findings: z.array(Finding).optional(),
});
export type NodeVersion = z.infer<typeof NodeVersion>;
export const VERSION_ANSWERED_FIELDS = answeredFields(NodeVersion);
export const VERSION_ANSWERED_LISTS = answeredListFields(NodeVersion);

export const PublisherMember = z.looseObject({
  id: z.string(),
  role: z.string(),
  user: z.looseObject({ email: z.string().optional(), id: z.string(), name: z.string().optional() }),
});
export type PublisherMember = z.infer<typeof PublisherMember>;

export const Publisher = z.looseObject({
  id: z.string(),
  name: answered,
  createdAt: isoDate.optional(),
  description: answered,
  logo: answered,
  members: z.array(PublisherMember).optional(),
  source_code_repo: answered,
  status: z.enum(PUBLISHER_STATUS).optional(),
  support: answered,
  website: answered,
});
export type Publisher = z.infer<typeof Publisher>;
export const PUBLISHER_ANSWERED_FIELDS = answeredFields(Publisher);

export const Node = z.looseObject({
  id: z.string(),
  author: answered,
  banner_url: answered,
  /** Deprecated by the spec in favour of `tags`. */
  category: answered,
  created_at: isoDate.optional(),
  description: answered,
  downloads: z.number().int().optional(),
  repohost_stars: z.number().int().optional(),
  icon: answered,
  latest_version: NodeVersion.optional(),
  license: answered,
  name: answered,
  preempted_app_node_names: answeredList,
  publisher: Publisher.optional(),
  rating: z.number().optional(),
  repository: answered,
  search_ranking: z.number().int().optional(),
  status: z.enum(NODE_STATUS).optional(),
  status_detail: answered,
  supported_accelerators: answeredList,
  supported_appui_frontend_version: answered,
  supported_appui_version: answered,
  supported_os: answeredList,
  tags: answeredList,
  tags_admin: answeredList,
  translations: z.record(z.string(), z.unknown()).optional(),
  // the hosted registry's names (HOST_APP_ALIASES)
  github_stars: hostedName(z.number().int().optional(), 'repohost_stars'),
  preempted_comfy_node_names: hostedName(strings.default([]), 'preempted_app_node_names'),
  supported_comfyui_frontend_version: hostedName(z.string().default(''), 'supported_appui_frontend_version'),
  supported_comfyui_version: hostedName(z.string().default(''), 'supported_appui_version'),
});
export type Node = z.infer<typeof Node>;
export const NODE_ANSWERED_FIELDS = answeredFields(Node);
export const NODE_ANSWERED_LISTS = answeredListFields(Node);

// ---------- request bodies ----------
// Updates are partial: an absent field is left as it is, `null` clears an optional one.

const clearable = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

// The fields of Node, NodeVersion and Publisher that requests write are named here and only here:
// the server's routes, the store (its types, columns and JSON documents) and the views derive from
// these shapes.

/** Node metadata the members of its publisher may write (in the order the CLI lists its flags). */
export const NodeWritable = z.object({
  name: clearable(text(NAME_MAX)).describe('display name'),
  description: clearable(text(DESCRIPTION_MAX)).describe('description'),
  author: clearable(text(NAME_MAX)).describe('author'),
  license: clearable(text(SHORT_TEXT_MAX)).describe('license (path to the LICENSE file in the repository)'),
  repository: clearable(urlField).describe('repository URL'),
  icon: clearable(urlField).describe('icon URL'),
  banner_url: clearable(urlField).describe('banner URL'),
  tags: clearable(list(TAGS)).describe('tags'),
  category: clearable(text(TAGS.maxLength)).meta({ description: 'category (deprecated in favour of tags)', deprecated: true }),
  supported_os: clearable(list(PLATFORMS)).describe('supported operating systems'),
  supported_accelerators: clearable(list(PLATFORMS)).describe('supported accelerators'),
  supported_appui_version: clearable(versionRangeField).describe('supported versions of the host application'),
  supported_appui_frontend_version: clearable(versionRangeField).describe('supported versions of the host frontend'),
  preempted_app_node_names: clearable(list(NODE_NAMES)).describe('node names of the host application this node takes precedence over'),
  translations: clearable(translations).describe('translations of the metadata, by language'),
});
/** The type of a writable node field's value ('string', 'array', 'record'), for those that offer it as a flag or key. */
export const nodeFieldType = (field: keyof typeof NodeWritable.shape): string => NodeWritable.shape[field].unwrap().unwrap().type;

/** Node metadata only an admin changes: a value equal to the current one is ignored, a different one is 403. */
export const NodeAdminWritable = z.object({
  tags_admin: clearable(list(TAGS)),
  search_ranking: clearable(z.number().int()),
  repohost_stars: clearable(z.number().int()),
  status_detail: clearable(text(SHORT_TEXT_MAX)),
});
/** Every node field a request may write except `status` (which has rules of its own). */
export const NodeMetadata = NodeWritable.extend(NodeAdminWritable.shape);
export type NodeMetadata = z.infer<typeof NodeMetadata>;
export type NodeFieldName = keyof NodeMetadata;
export const NODE_WRITABLE_FIELDS = Object.keys(NodeWritable.shape) as (keyof typeof NodeWritable.shape)[];
export const NODE_ADMIN_FIELDS = Object.keys(NodeAdminWritable.shape) as (keyof typeof NodeAdminWritable.shape)[];
export const NODE_METADATA_FIELDS = Object.keys(NodeMetadata.shape) as NodeFieldName[];
/**
 * The node fields a database keeps in columns of their own, because search matches them or lists
 * sort by them. The other metadata is kept as one JSON document.
 */
export const NODE_COLUMN_FIELDS = ['name', 'description', 'author', 'tags', 'search_ranking'] as const satisfies readonly NodeFieldName[];

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
function asIncumbentSends<S extends z.ZodRawShape>(schema: z.ZodObject<S>) {
  const emptyIsUnset = Object.keys(schema.shape).filter((key) => isOptionalString(schema.shape[key] as z.ZodType));
  const aliases = Object.entries(HOST_APP_ALIASES).filter(([, ours]) => ours in schema.shape);
  const aliasFields = Object.fromEntries(
    aliases.map(([alias, ours]) => [alias, (schema.shape[ours] as z.ZodType).meta({ deprecated: true, description: `deprecated input name of ${ours}` })]),
  );
  const extended = schema.extend(aliasFields);
  return transform<typeof extended, 'incumbent', z.output<z.ZodObject<S>>>(extended, 'incumbent', { aliases, emptyIsUnset });
}

export const NodeInput = asIncumbentSends(z.object({
  id: nodeId.optional(),
  ...NodeWritable.shape,
  status: z.enum(NODE_STATUS).optional(),
  ...NodeAdminWritable.shape,
  // read-only, accepted so that a GET-modify-PUT round trip works, and ignored
  publisher: z.unknown().optional(),
  latest_version: z.unknown().optional(),
  rating: z.unknown().optional(),
  downloads: z.unknown().optional(),
  created_at: z.unknown().optional(),
}));
export type NodeInput = z.infer<typeof NodeInput>;

/** What a publish sets on a version, and replaces when retried before the archive arrives. */
export const VersionPublished = z.object({
  changelog: text(CHANGELOG_MAX).optional(),
  dependencies: list(DEPENDENCIES).optional(),
  supported_accelerators: list(PLATFORMS).optional(),
  supported_appui_frontend_version: versionRangeField.optional(),
  supported_appui_version: versionRangeField.optional(),
  supported_os: list(PLATFORMS).optional(),
  tags: list(TAGS).optional(),
});
export const VERSION_PUBLISHED_FIELDS = Object.keys(VersionPublished.shape) as (keyof typeof VersionPublished.shape)[];

export const NodeVersionInput = asIncumbentSends(z.object({
  version: semver,
  ...VersionPublished.shape,
  // The archive that will be uploaded (an extension): declared, the registry refuses one over its
  // limits before the version exists, and takes no other archive for it.
  archive_sha256: sha256Hex.optional(),
  archive_size: z.number().int().min(1).optional(),
  // read-only or server-set, ignored when sent
  id: z.unknown().optional(),
  node_id: z.unknown().optional(),
  createdAt: z.unknown().optional(),
  downloadUrl: z.unknown().optional(),
  deprecated: z.unknown().optional(),
  status: z.unknown().optional(),
  status_reason: z.unknown().optional(),
  tags_admin: z.unknown().optional(),
  app_node_extract_status: z.unknown().optional(),
}));
export type NodeVersionInput = z.infer<typeof NodeVersionInput>;

export const PublishBody = z.object({
  node: NodeInput.default({}),
  node_version: NodeVersionInput,
  personal_access_token: z.string().min(1).max(IDENTIFIER_MAX).optional(),
});
export type PublishBody = z.input<typeof PublishBody>;

export const PublishResponse = z.looseObject({ node_version: NodeVersion, signedUrl: z.string() });
export type PublishResponse = z.infer<typeof PublishResponse>;

/** Publisher metadata its owners may write. */
export const PublisherWritable = z.object({
  name: clearable(text(NAME_MAX)),
  description: clearable(text(DESCRIPTION_MAX)),
  logo: clearable(urlField),
  source_code_repo: clearable(urlField),
  support: clearable(text(SHORT_TEXT_MAX)),
  website: clearable(urlField),
});
export const PUBLISHER_WRITABLE_FIELDS = Object.keys(PublisherWritable.shape) as (keyof typeof PublisherWritable.shape)[];

export const PublisherInput = z.object({
  id: publisherId.optional(),
  ...PublisherWritable.shape,
  status: z.enum(PUBLISHER_STATUS).optional(),
  // members have their own routes; createdAt is server-set
  members: z.unknown().optional(),
  createdAt: z.unknown().optional(),
});
export type PublisherInput = z.infer<typeof PublisherInput>;

export const CreatePublisherBody = PublisherInput.extend({ id: publisherId, name: text(NAME_MAX).min(1).optional() });
export type CreatePublisherBody = z.input<typeof CreatePublisherBody>;

export const VersionUpdateBody = z.object({
  changelog: text(CHANGELOG_MAX).optional(),
  deprecated: z.boolean().optional(),
  // admin-only: how versions under manual review are approved, flagged or banned
  status: z.enum(NODE_VERSION_STATUS).optional(),
  status_reason: text(DESCRIPTION_MAX).optional(),
});
export type VersionUpdateBody = z.input<typeof VersionUpdateBody>;

// ---------- query strings ----------

/** A whole number from a query string, in plain decimal digits (no `0x10`, `1e1` or spaces), within bounds. */
export function queryInteger(min: number, max = Number.MAX_SAFE_INTEGER) {
  return z
    .union([z.number(), z.string().regex(/^-?\d{1,15}$/, 'must be a whole number (no decimals), such as 3').transform(Number)])
    .pipe(z.number().int().min(min).max(max));
}

export const pageNumber = queryInteger(PAGE.min).default(PAGE.min);
export const pageLimit = queryInteger(PAGE.limitMin, PAGE.limitMax).default(PAGE.defaultLimit);

// A publisher's nodes were answered all at once: a page of the most by default keeps that answer for up to 100.
export const PublisherNodesQuery = z.object({ page: pageNumber, limit: queryInteger(PAGE.limitMin, PAGE.limitMax).default(PAGE.limitMax) });

export const NodeList = z.looseObject({
  nodes: z.array(Node),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  totalPages: z.number().int(),
});
export type NodeList = z.infer<typeof NodeList>;

// ---------- accounts and tokens ----------

export const User = z.looseObject({
  id: z.string(),
  name: z.string(),
  email: z.string().optional(),
  admin: z.boolean().optional(),
});
export type User = z.infer<typeof User>;

export const Me = z.union([
  z.looseObject({
    kind: z.literal('user'),
    user: User,
    publishers: z.array(z.looseObject({ id: z.string(), role: z.string() })),
  }),
  z.looseObject({
    kind: z.literal('pat'),
    publisher: z.looseObject({ id: z.string() }),
    token: z.looseObject({ id: z.string(), name: z.string() }),
    user: z.looseObject({ id: z.string(), name: z.string() }),
  }),
]);
export type Me = z.infer<typeof Me>;

export const CreateUserBody = z.object({
  name: text(NAME_MAX).min(1),
  email: z.email().optional(),
  admin: z.boolean().optional(),
});
export const CreateTokenBody = z.object({ name: text(NAME_MAX).min(1).default('token') });
export const CreatedToken = z.looseObject({
  id: z.string(),
  name: z.string(),
  created_at: isoDate,
  token: z.string(),
});
export const CreatedUser = z.looseObject({ user: User, token: z.string() });
export const TokenInfo = z.looseObject({
  id: z.string(),
  name: z.string(),
  created_at: isoDate,
  last_used_at: isoDate.nullable().optional(),
  prefix: z.string(),
});
export const TokenList = z.array(TokenInfo);
/**
 * Adding a member invites a user, named by what the owner knows: `user` (an id, an e-mail or a user
 * name); `user_id` is the older name of the same field. The user joins once they accept.
 */
export const AddMemberBody = z
  .object({
    user: z.string().min(1).max(USER_REF_MAX).optional().describe("the user to invite: their id, e-mail or user name"),
    user_id: z.string().min(1).max(USER_REF_MAX).optional().describe('the same as `user` (older name)'),
    role: z.enum(MEMBER_ROLES).default('member'),
  })
  .refine((body) => body.user !== undefined || body.user_id !== undefined, { message: 'name the user to invite: its id, e-mail or user name', path: ['user'] });

/**
 * An invitation to join a publisher. `status` is `pending` until the user accepts; `member` when the
 * user already was a member and only their role changed (no consent needed for that). Never an e-mail.
 */
export const Invitation = z.looseObject({
  publisher: z.looseObject({ id: z.string(), name: z.string().optional() }),
  user: z.looseObject({ id: z.string(), name: z.string() }),
  role: z.enum(MEMBER_ROLES),
  invited_by: z.looseObject({ id: z.string(), name: z.string() }).optional(),
  status: z.enum(['pending', 'member']),
  created_at: isoDate,
});
export type Invitation = z.infer<typeof Invitation>;

export const Health = z.looseObject({ ok: z.boolean(), version: z.string().optional() });

/** What a registry takes (`serve --max-archive`, `--max-unpacked`), so a client can check before it publishes. */
export const RegistryLimits = z.looseObject({
  max_archive: z.number().int().describe('largest archive, in bytes (compressed)'),
  max_unpacked: z.number().int().describe('largest total size of the files in an archive, in bytes'),
  max_entries: z.number().int().describe('most entries an archive may hold'),
});
export type RegistryLimits = z.infer<typeof RegistryLimits>;

// ---------- AI task replies ----------

export const ImageTaskReference = z.looseObject({
  data: z.looseObject({ generated: strings, task_id: z.string() }),
});
export type ImageTaskReference = z.infer<typeof ImageTaskReference>;

export const VideoExtendResponse = z.looseObject({
  credits: z.number().int(),
  state: z.enum(VIDEO_TASK_STATE),
  task_id: z.string(),
  created_at: isoDate.optional(),
  duration: z.number().int().optional(),
  images: strings.optional(),
  model: z.string().optional(),
  payload: z.string().optional(),
  prompt: z.string().optional(),
  resolution: z.string().optional(),
  video_creation_id: z.string().optional(),
  video_url: z.string().optional(),
});
export type VideoExtendResponse = z.infer<typeof VideoExtendResponse>;

export const ImageTaskStatus = z.looseObject({
  data: z.looseObject({ task_id: z.string(), status: z.enum(IMAGE_TASK_STATUS), generated: strings }),
});
export type ImageTaskStatus = z.infer<typeof ImageTaskStatus>;

export const VideoTaskStatus = z.looseObject({
  task_id: z.string(),
  state: z.enum(VIDEO_TASK_STATE),
  credits: z.number().int(),
  creations: z.array(z.looseObject({ id: z.string(), url: z.string() })),
});
export type VideoTaskStatus = z.infer<typeof VideoTaskStatus>;
