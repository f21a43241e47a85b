import * as z from 'zod';
import { DESCRIPTION_MAX, NAME_MAX, NODE_NAMES, NODE_STATUS, PLATFORMS, SHORT_TEXT_MAX, TAGS } from '../limits.js';
import { list, text, translations, urlField, versionRangeField } from '../fields.js';
import {
  answered,
  answeredFields,
  answeredList,
  answeredListFields,
  asIncumbentSends,
  clearable,
  hostedName,
  isoDate,
  nodeId,
  strings,
} from './fields.js';
import { NodeVersion } from './node-version.js';
import { Publisher } from './publisher.js';

// Parsed leniently as the server answers it: unknown fields kept.
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
  origin: z
    .enum(['upstream'])
    .optional()
    .describe(
      "`upstream` on a node a mirror answers from the registry it mirrors (`serve --upstream`); absent on this registry's own nodes",
    ),
  // the hosted registry's names (HOST_APP_ALIASES)
  github_stars: hostedName(z.number().int().optional(), 'repohost_stars'),
  preempted_comfy_node_names: hostedName(strings.default([]), 'preempted_app_node_names'),
  supported_comfyui_frontend_version: hostedName(z.string().default(''), 'supported_appui_frontend_version'),
  supported_comfyui_version: hostedName(z.string().default(''), 'supported_appui_version'),
});
export type Node = z.infer<typeof Node>;
export const NODE_ANSWERED_FIELDS = answeredFields(Node);
export const NODE_ANSWERED_LISTS = answeredListFields(Node);

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
  category: clearable(text(TAGS.maxLength)).meta({
    description: 'category (deprecated in favour of tags)',
    deprecated: true,
  }),
  supported_os: clearable(list(PLATFORMS)).describe('supported operating systems'),
  supported_accelerators: clearable(list(PLATFORMS)).describe('supported accelerators'),
  supported_appui_version: clearable(versionRangeField).describe('supported versions of the host application'),
  supported_appui_frontend_version: clearable(versionRangeField).describe('supported versions of the host frontend'),
  preempted_app_node_names: clearable(list(NODE_NAMES)).describe(
    'node names of the host application this node takes precedence over',
  ),
  translations: clearable(translations).describe('translations of the metadata, by language'),
});
/** The type of a writable node field's value ('string', 'array', 'record'), for those that offer it as a flag or key. */
export const nodeFieldType = (field: keyof typeof NodeWritable.shape): string =>
  NodeWritable.shape[field].unwrap().unwrap().type;

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
export const NODE_COLUMN_FIELDS = [
  'name',
  'description',
  'author',
  'tags',
  'search_ranking',
] as const satisfies readonly NodeFieldName[];

export const NodeInput = asIncumbentSends(
  z.object({
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
  }),
);
export type NodeInput = z.infer<typeof NodeInput>;

export const NodeList = z.looseObject({
  nodes: z.array(Node),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  totalPages: z.number().int(),
});
export type NodeList = z.infer<typeof NodeList>;
