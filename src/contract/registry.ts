import { reviewOperations } from './review-flow.js';
import * as z from 'zod';
import { PAGE, READY_STORAGE_KEEP_MS, STAR } from './limits.js';
import { op } from './operation.js';
import { accountOperations } from './account-operations.js';
import { ApprovedFindings } from './scan.js';
import { CONTENT_SHA256_HEADER, SHA256_HEX_PATTERN, UNIX_SECONDS_PATTERN } from './upload.js';
import {
  Health,
  Node,
  NodeInput,
  NodeList,
  NodeVersion,
  PublishBody,
  PublishResponse,
  Publisher,
  PublisherInput,
  PublisherNodesQuery,
  RegistryLimits,
  VersionUpdateBody,
  queryInteger,
} from './resources.js';
import {
  BULK_VERSIONS_MAX,
  BulkVersionsAnswer,
  BulkVersionsBody,
  ComfyNode,
  ComfyNodeList,
  ComfyNodesQuery,
  ListNodesQuery,
  ListVersionsQuery,
  SearchNodesQuery,
  VersionComfyNodes,
} from './reads.js';

// The account operations are part of the registry's interface too.
export * from './account-operations.js';

// ---------- the five registry operations of the interface ----------

export const publishVersion = op({
  id: 'publishVersion',
  method: 'POST',
  path: '/publishers/{publisherId}/nodes/{nodeId}/versions',
  summary: 'Publish a new version of a node; answers with a signed URL to upload its archive to',
  spec: true,
  repeatable: true,
  auth: 'user',
  body: PublishBody,
  status: 201,
  response: PublishResponse,
});

export const updateNode = op({
  id: 'updateNode',
  method: 'PUT',
  path: '/publishers/{publisherId}/nodes/{nodeId}',
  summary: 'Update a node: only the fields present change, null clears one',
  spec: true,
  auth: 'user',
  body: NodeInput,
  response: Node,
});

export const updatePublisher = op({
  id: 'updatePublisher',
  method: 'PUT',
  path: '/publishers/{publisherId}',
  summary: 'Update a publisher (owner only)',
  spec: true,
  auth: 'user',
  body: PublisherInput,
  response: Publisher,
});

export const updateVersion = op({
  id: 'updateVersion',
  method: 'PUT',
  path: '/publishers/{publisherId}/nodes/{nodeId}/versions/{versionId}',
  summary:
    "Update a version's changelog and deprecation (and, for admins, its status); versionId is the id or the semver",
  spec: true,
  auth: 'user',
  body: VersionUpdateBody,
  response: NodeVersion,
});

export const StarQuery = z.object({ star: queryInteger(STAR.min, STAR.max) });

export const addReview = op({
  id: 'addReview',
  method: 'POST',
  path: '/nodes/{nodeId}/reviews',
  summary: `Review a node with ${STAR.min} to ${STAR.max} stars; a second review by the same user replaces the first`,
  spec: true,
  auth: 'user',
  query: StarQuery,
  response: Node,
});

// ---------- upload and download of archives ----------

/** A signed upload URL's query; `size` and `sha256` are there when the publish declared its archive. */
// token_id: the id (not the secret) of the token that published; the upload is refused once it is revoked.
export const UploadQuery = z.object({
  expires: z.string().regex(new RegExp(UNIX_SECONDS_PATTERN)),
  signature: z.string().regex(new RegExp(SHA256_HEX_PATTERN)),
  size: z.string().optional(),
  sha256: z.string().optional(),
  token_id: z.string().optional(),
});
/** An upload's headers beyond its Content-Type: the archive's SHA-256, checked against the bytes received. */
export const UploadHeaders = z.object({
  [CONTENT_SHA256_HEADER]: z.string().regex(new RegExp(SHA256_HEX_PATTERN)).optional(),
});

export const uploadArchive = op({
  id: 'uploadArchive',
  method: 'PUT',
  path: '/uploads/{versionId}',
  summary:
    'Upload the archive of a published version to its signed URL (Content-Type application/zip, X-Content-SHA256)',
  auth: 'signature',
  query: UploadQuery,
  headers: UploadHeaders,
  bodyKind: 'zip',
  response: NodeVersion,
});

/** A download's headers: the SHA-256 the registry recorded at upload, which the client checks the bytes against. */
export const DownloadHeaders = z.object({
  [CONTENT_SHA256_HEADER]: z
    .string()
    .regex(new RegExp(SHA256_HEX_PATTERN))
    .describe("The archive's SHA-256 as recorded at upload (lowercase hex); the bytes must hash to it"),
});

export const downloadArchive = op({
  id: 'downloadArchive',
  method: 'GET',
  path: '/archives/{publisherId}/{nodeId}/{version}/node.zip',
  summary: "Download a version's archive",
  auth: 'none',
  responseKind: 'zip',
  responseHeaders: DownloadHeaders,
});

// ---------- reads ----------

export const listNodes = op({
  id: 'listNodes',
  method: 'GET',
  path: '/nodes',
  summary: 'List active nodes, a page at a time',
  auth: 'none',
  query: ListNodesQuery,
  response: NodeList,
});
export const searchNodes = op({
  id: 'searchNodes',
  method: 'GET',
  path: '/nodes/search',
  summary: 'Search active nodes by id, name, description, author and tags',
  auth: 'none',
  query: SearchNodesQuery,
  response: NodeList,
});
export const getNode = op({
  id: 'getNode',
  method: 'GET',
  path: '/nodes/{nodeId}',
  summary: 'A node with its latest version',
  auth: 'none',
  response: Node,
});
export const listNodeVersions = op({
  id: 'listNodeVersions',
  method: 'GET',
  path: '/nodes/{nodeId}/versions',
  summary: 'Every version of a node, newest semver first',
  auth: 'none',
  query: ListVersionsQuery,
  response: z.array(NodeVersion),
});
export const getNodeVersion = op({
  id: 'getNodeVersion',
  method: 'GET',
  path: '/nodes/{nodeId}/versions/{version}',
  summary: 'One version of a node',
  auth: 'none',
  response: NodeVersion,
});
export const listApprovedFindings = op({
  id: 'listApprovedFindings',
  method: 'GET',
  path: '/nodes/{nodeId}/approved-findings',
  summary:
    "The scan findings an admin approved for a node (by making a Flagged version Active): a later version whose high findings are all approved is not flagged for them. For the node's publisher members and admins",
  auth: 'user',
  response: ApprovedFindings,
});
export const installNode = op({
  id: 'installNode',
  method: 'GET',
  path: '/nodes/{nodeId}/install',
  summary: 'The active version to install (latest unless given), with its download URL; counts a download',
  auth: 'none',
  query: z.object({ version: z.string().optional() }),
  response: NodeVersion,
});
export const bulkNodeVersions = op({
  id: 'bulkNodeVersions',
  method: 'POST',
  path: '/bulk/nodes/versions',
  summary: `Look up to ${BULK_VERSIONS_MAX} versions at once: one entry per item asked, in order, each success, not_found or error`,
  spec: true,
  auth: 'none',
  body: BulkVersionsBody,
  response: BulkVersionsAnswer,
});
export const listVersionComfyNodes = op({
  id: 'listVersionComfyNodes',
  method: 'GET',
  path: '/nodes/{nodeId}/versions/{version}/comfy-nodes',
  summary: 'The node classes a version defines, read statically from its archive, a page at a time',
  spec: true,
  auth: 'none',
  query: ComfyNodesQuery,
  response: VersionComfyNodes,
});
export const getVersionComfyNode = op({
  id: 'getVersionComfyNode',
  method: 'GET',
  path: '/nodes/{nodeId}/versions/{version}/comfy-nodes/{comfyNodeName}',
  summary: 'One node class a version defines',
  spec: true,
  auth: 'none',
  response: ComfyNode,
});
export const getComfyNodeNode = op({
  id: 'getComfyNodeNode',
  method: 'GET',
  path: '/comfy-nodes/{comfyNodeName}/node',
  summary: 'The node whose newest Active version defines this node class',
  spec: true,
  auth: 'none',
  response: Node,
});
export const listComfyNodes = op({
  id: 'listComfyNodes',
  method: 'GET',
  path: '/comfy-nodes',
  summary: 'The node classes of every Active version, by name, a page at a time',
  spec: true,
  auth: 'none',
  query: ComfyNodesQuery,
  response: ComfyNodeList,
});
export const getPublisher = op({
  id: 'getPublisher',
  method: 'GET',
  path: '/publishers/{publisherId}',
  summary: 'A publisher with its members',
  auth: 'none',
  response: Publisher,
});
export const listPublisherNodes = op({
  id: 'listPublisherNodes',
  method: 'GET',
  path: '/publishers/{publisherId}/nodes',
  summary: `A publisher's nodes by id, a page at a time (at most ${PAGE.limitMax}); a header \`Link: <URL>; rel="next"\` names the next page while there is one`,
  auth: 'none',
  query: PublisherNodesQuery,
  response: z.array(Node),
});
export const health = op({
  id: 'health',
  method: 'GET',
  path: '/healthz',
  summary: 'Liveness check',
  auth: 'none',
  response: Health,
});
export const ready = op({
  id: 'ready',
  method: 'GET',
  path: '/readyz',
  summary: `Readiness check: 200 while the registry reaches its database and its archive storage (checked at most every ${READY_STORAGE_KEEP_MS / 1000} s), 503 while it does not`,
  auth: 'none',
  response: Health,
});
export const getLimits = op({
  id: 'getLimits',
  method: 'GET',
  path: '/limits',
  summary: "The registry's archive limits, to check an archive before publishing it",
  auth: 'none',
  response: RegistryLimits,
});
export const metrics = op({
  id: 'metrics',
  method: 'GET',
  path: '/metrics',
  summary:
    "The registry's metrics in Prometheus' text format (requests per route and status, latencies, storage, database, scans, uploads, rate-limit refusals); admins only",
  auth: 'user',
  responseKind: 'text',
});

export const openapiDocument = op({
  id: 'openapiDocument',
  method: 'GET',
  path: '/openapi.json',
  summary: 'This OpenAPI document',
  auth: 'none',
  response: z.record(z.string(), z.unknown()),
});

export * from './review-flow.js';

export const registryOperations = [
  ...reviewOperations,
  publishVersion,
  updateNode,
  updatePublisher,
  updateVersion,
  addReview,
  uploadArchive,
  downloadArchive,
  listNodes,
  searchNodes,
  getNode,
  listNodeVersions,
  getNodeVersion,
  listApprovedFindings,
  installNode,
  bulkNodeVersions,
  listVersionComfyNodes,
  getVersionComfyNode,
  getComfyNodeNode,
  listComfyNodes,
  getPublisher,
  listPublisherNodes,
  health,
  ready,
  metrics,
  getLimits,
  openapiDocument,
  ...accountOperations,
];
