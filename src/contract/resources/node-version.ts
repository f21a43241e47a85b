import * as z from 'zod';
import { CHANGELOG_MAX, DEPENDENCIES, DESCRIPTION_MAX, NODE_VERSION_STATUS, PLATFORMS, TAGS } from '../limits.js';
import { Finding } from '../scan.js';
import { list, text, versionRangeField } from '../fields.js';
import {
  answered,
  answeredFields,
  answeredList,
  answeredListFields,
  asIncumbentSends,
  hostedName,
  isoDate,
  semver,
  sha256Hex,
} from './fields.js';

// Parsed leniently as the server answers it: unknown fields kept.
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
  /** A signed provenance statement is at /nodes/{id}/versions/{v}/provenance (published from a trusted CI workflow). */
  has_provenance: z.boolean().optional(),
});
export type NodeVersion = z.infer<typeof NodeVersion>;
export const VERSION_ANSWERED_FIELDS = answeredFields(NodeVersion);
export const VERSION_ANSWERED_LISTS = answeredListFields(NodeVersion);

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

export const NodeVersionInput = asIncumbentSends(
  z.object({
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
  }),
);
export type NodeVersionInput = z.infer<typeof NodeVersionInput>;

export const VersionUpdateBody = z.object({
  changelog: text(CHANGELOG_MAX).optional(),
  deprecated: z.boolean().optional(),
  // admin-only: how versions under manual review are approved, flagged or banned
  status: z.enum(NODE_VERSION_STATUS).optional(),
  status_reason: text(DESCRIPTION_MAX).optional(),
});
export type VersionUpdateBody = z.input<typeof VersionUpdateBody>;
