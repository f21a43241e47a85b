// The mirror's own operations (DESIGN.md §13): what the operator reads of the cache, and the sync that
// fetches and pins a node's archives ahead of time (`nodereg mirror sync`). Admins only.
import * as z from 'zod';
import { op } from './operation.js';
import { pageLimit, pageNumber } from './resources.js';

/** A version kept from upstream, with why the operator's policy holds it back, if it does. */
export const MirroredVersion = z.looseObject({
  version: z.string(),
  status: z.string().optional(),
  createdAt: z.string().optional(),
  /** Why the policy holds the version back: it is absent from every other answer. */
  held_back: z.string().optional(),
  archive: z
    .looseObject({ sha256: z.string(), size: z.number(), pinned: z.boolean(), last_used: z.string() })
    .optional(),
});

export const MirroredNode = z.looseObject({
  id: z.string(),
  publisher: z.string(),
  fetched_at: z.string(),
  failure: z.looseObject({ at: z.string(), message: z.string() }).optional(),
  versions: z.array(MirroredVersion),
  refused: z.array(z.looseObject({ version: z.string(), pinned: z.string(), offered: z.string(), at: z.string() })),
});

export const MirrorStatus = z.looseObject({
  upstream: z.string(),
  nodes: z.array(
    z.looseObject({
      id: z.string(),
      fetched_at: z.string(),
      archives: z.number().int(),
      pinned: z
        .number()
        .int()
        .describe('archives never evicted: synced, or downloaded in the last `--upstream-pin-days` days'),
      bytes: z.number().int(),
      refused: z.number().int(),
      failure: z.string().optional(),
    }),
  ),
  archives: z.number().int(),
  bytes: z.number().int(),
});

export const SyncBody = z.object({ versions: z.enum(['latest', 'all']).default('latest') });

export const SyncedVersion = z.looseObject({
  version: z.string(),
  outcome: z.enum(['fetched', 'kept', 'held_back', 'failed']),
  reason: z.string().optional(),
  sha256: z.string().optional(),
  size: z.number().int().optional(),
});
export const SyncAnswer = z.looseObject({ id: z.string(), versions: z.array(SyncedVersion) });

export const getMirrorStatus = op({
  id: 'getMirrorStatus',
  method: 'GET',
  path: '/mirror/status',
  summary: 'The nodes kept from upstream: archives, bytes, last refresh, failures (admins)',
  auth: 'user',
  response: MirrorStatus,
});
export const getMirroredNode = op({
  id: 'getMirroredNode',
  method: 'GET',
  path: '/mirror/nodes/{nodeId}',
  summary: "A node kept from upstream with every version, and why the operator's policy holds some back (admins)",
  auth: 'user',
  response: MirroredNode,
});
export const syncMirroredNode = op({
  id: 'syncMirroredNode',
  method: 'POST',
  path: '/mirror/nodes/{nodeId}/sync',
  summary: "Fetch and pin a node's archives from upstream, as the policy lets through (admins)",
  auth: 'user',
  body: SyncBody,
  response: SyncAnswer,
});

export const UpstreamNodesQuery = z.object({
  publisher: z
    .string()
    .max(100)
    .optional()
    .describe("only this upstream publisher's nodes; every upstream node when absent"),
  page: pageNumber,
  limit: pageLimit,
});
export const UpstreamNodesPage = z.looseObject({
  nodes: z.array(z.looseObject({ id: z.string(), publisher: z.string() })),
  page: z.number().int(),
  /** Whether upstream has a page after this one. */
  more: z.boolean(),
});
export const listUpstreamNodes = op({
  id: 'listUpstreamNodes',
  method: 'GET',
  path: '/mirror/upstream-nodes',
  summary:
    "A page of the upstream registry's nodes, or of one upstream publisher's, leaving out those this registry's own ids and publishers hide (admins; what `mirror sync --all|--publisher` syncs)",
  auth: 'user',
  query: UpstreamNodesQuery,
  response: UpstreamNodesPage,
});

export const mirrorOperations = [getMirrorStatus, getMirroredNode, syncMirroredNode, listUpstreamNodes];
