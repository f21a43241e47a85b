// The reads the field's clients make (DESIGN.md §12): the hosted registry's parameters on lists and
// search, the bulk version lookup and the node classes a version defines. A parameter the hosted
// registry takes and we do not act on is declared here, described as ignored, never refused.
import * as z from 'zod';
import { NAME_MAX, NODE_ID, NODE_SORTS, NODE_VERSION_STATUS, PAGE, SEARCH_TERMS_MAX, VERSION_MAX } from './limits.js';
import { repeated, rule } from './fields.js';
import { NodeVersion, pageLimit, pageNumber } from './resources.js';

/** A parameter the hosted registry's clients send that this registry accepts and does not act on (docs/registry.md). */
const ignoredParam = (what: string) => z.string().optional().describe(`${what}; accepted and ignored`);
const flag = (description: string) => z.enum(['true', 'false']).optional().describe(description);
const hostFilters = {
  comfyui_version: ignoredParam("the host application's version the caller runs"),
  form_factor: ignoredParam('how the host application was installed'),
  supported_os: ignoredParam('an operating system to filter by'),
  supported_accelerator: ignoredParam('an accelerator to filter by'),
};

export const ListNodesQuery = z.object({
  page: pageNumber,
  limit: pageLimit,
  sort: z.enum(NODE_SORTS).default('created_at'),
  node_id: repeated(
    z.string().max(NODE_ID.maxLength),
    PAGE.limitMax,
    `only these nodes (repeatable, at most ${PAGE.limitMax})`,
  ),
  include_banned: flag('with true, an admin also sees Banned nodes among those named by node_id'),
  ...hostFilters,
});

const searchText = rule(
  z.string().max(NAME_MAX),
  'fewSearchTerms',
  `must hold at most ${SEARCH_TERMS_MAX} different words`,
);
export const SearchNodesQuery = z.object({
  q: searchText.default(''),
  search: searchText.optional().describe("the same as q (the hosted registry's name); q wins when both are given"),
  comfy_node_search: z
    .string()
    .max(NAME_MAX)
    .optional()
    .describe('only the nodes whose latest version defines this node class'),
  page: pageNumber,
  limit: pageLimit,
  include_banned: ignoredParam('whether to include Banned nodes'),
  ...hostFilters,
});

export const ListVersionsQuery = z.object({
  statuses: repeated(
    z.enum(NODE_VERSION_STATUS),
    NODE_VERSION_STATUS.length * 4,
    'only versions with one of these statuses (repeatable)',
  ),
  include_status_reason: flag(
    "with true, each version carries the scan's `findings` for the node's publisher members and admins",
  ),
});

/** The most versions one bulk request names. */
export const BULK_VERSIONS_MAX = 1000;
const VersionIdentifier = z.object({
  node_id: z.string().min(1).max(NODE_ID.maxLength),
  version: z.string().min(1).max(VERSION_MAX),
});
export const BulkVersionsBody = z.object({ node_versions: z.array(VersionIdentifier).max(BULK_VERSIONS_MAX) });
export const BULK_ITEM_STATUS = ['success', 'not_found', 'error'] as const;
export const BulkVersionsAnswer = z.looseObject({
  node_versions: z.array(
    z.looseObject({
      identifier: z.looseObject({ node_id: z.string(), version: z.string() }),
      status: z.enum(BULK_ITEM_STATUS),
      node_version: NodeVersion.optional(),
      error_message: z.string().optional(),
    }),
  ),
});
export type BulkVersionsAnswer = z.infer<typeof BulkVersionsAnswer>;

// ---------- node classes (DESIGN.md §12) ----------

/**
 * A node class a version defines, read statically from its archive. As the hosted registry sends it,
 * `input_types`, `return_types` and `return_names` are JSON text (the host's frontend parses them);
 * `output_is_list` is a list.
 */
export const ComfyNode = z.looseObject({
  comfy_node_name: z.string(),
  display_name: z.string().default(''),
  category: z.string().default(''),
  description: z.string().default(''),
  function: z.string().default(''),
  deprecated: z.boolean().default(false),
  experimental: z.boolean().default(false),
  output_node: z.boolean().default(false),
  input_types: z
    .string()
    .default('')
    .describe('JSON text: {"required": {name: type}, "optional": {name: type}}, the names written as literals'),
  return_types: z.string().default('').describe('JSON text: a list of type names'),
  return_names: z.string().default('').describe('JSON text: a list of output names'),
  output_is_list: z.array(z.boolean()).default([]),
});
export type ComfyNode = z.infer<typeof ComfyNode>;

export const ComfyNodesQuery = z.object({ page: pageNumber, limit: pageLimit });
/** A version's classes: `comfy_nodes` is null when it defines none (as the hosted registry answers). */
export const VersionComfyNodes = z.looseObject({
  comfy_nodes: z.array(ComfyNode).nullable(),
  totalNumberOfPages: z.number().int(),
});
export const ComfyNodeList = VersionComfyNodes.extend({
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
});
