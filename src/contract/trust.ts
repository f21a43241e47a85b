// Trusted publishing (DESIGN.md §15): the trusts a publisher registers, the exchange of a CI job's OIDC
// token for a short publish token, the registry's signing keys and a version's provenance. Wire only.
import * as z from 'zod';
import { op } from './operation.js';
import { isoDate, nodeId, publisherId } from './resources/fields.js';

/** The issuers every registry knows by name; an operator adds or replaces them with `--oidc-issuer NAME=URL`. */
export const DEFAULT_OIDC_ISSUERS: Record<string, string> = {
  github: 'https://token.actions.githubusercontent.com',
  gitlab: 'https://gitlab.com',
};
/** How long a token from `POST /oidc/exchange` publishes. */
export const EXCHANGED_TOKEN_TTL_MS = 15 * 60 * 1000;
/** The prefix of an exchanged token: it publishes and uploads, nothing else. */
export const EXCHANGED_TOKEN_PREFIX = 'nrg_oidc_';
/** The operations an exchanged token may call (uploads take the signed URL publishing answers with). */
export const EXCHANGED_TOKEN_OPERATIONS: readonly string[] = ['publishVersion'];

const REPOSITORY_PATTERN = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+$/;
const WORKFLOW_PATTERN = /^[A-Za-z0-9_.-]+\.ya?ml$/;

export const Trust = z.looseObject({
  id: z.string(),
  publisher_id: z.string(),
  node_id: z.string().optional(),
  issuer: z.string(),
  repository: z.string(),
  workflow: z.string(),
  environment: z.string().optional(),
  ref: z.string().optional(),
  created_at: isoDate,
});
export type Trust = z.infer<typeof Trust>;

export const AddTrustBody = z.object({
  issuer: z
    .string()
    .min(1)
    .max(64)
    .default('github')
    .describe('the issuer by name (github, gitlab, or one the registry was configured with)'),
  repository: z
    .string()
    .max(200)
    .regex(REPOSITORY_PATTERN, 'must be OWNER/NAME (a GitLab group may nest: GROUP/SUB/NAME)')
    .describe('the repository whose CI job may publish'),
  workflow: z
    .string()
    .max(200)
    .regex(WORKFLOW_PATTERN, 'must be the workflow file name, such as publish.yml')
    .describe('the workflow file under .github/workflows/ (GitHub) or the CI file (GitLab)'),
  environment: z.string().min(1).max(200).optional().describe('the deployment environment the job must run in'),
  ref: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('the git ref the job must run on; * matches any run of characters (refs/tags/v*)'),
  node_id: nodeId.optional().describe('a node of the publisher: the trust publishes that node only'),
});
export type AddTrustBody = z.input<typeof AddTrustBody>;

export const ExchangeBody = z.object({
  token: z
    .string()
    .min(1)
    .max(16 * 1024)
    .describe("the CI platform's OIDC token (a JWT)"),
  publisher_id: publisherId.describe('the publisher to publish for'),
  node_id: nodeId.optional().describe('the node to publish'),
});
export type ExchangeBody = z.input<typeof ExchangeBody>;

export const ExchangedToken = z.looseObject({
  token: z.string(),
  expires_at: isoDate,
  publisher_id: z.string(),
  node_id: z.string().optional(),
  trust_id: z.string(),
});
export type ExchangedToken = z.infer<typeof ExchangedToken>;

export const RegistryKeys = z.looseObject({
  keys: z.array(
    z.looseObject({
      keyid: z.string(),
      algorithm: z.literal('ed25519'),
      /** The public key, SPKI DER as base64. */
      public_key: z.string(),
    }),
  ),
});
export type RegistryKeys = z.infer<typeof RegistryKeys>;

/** A DSSE envelope: the statement's exact bytes (base64) and signatures over their pre-authentication encoding. */
export const ProvenanceEnvelope = z.looseObject({
  payloadType: z.string(),
  payload: z.string(),
  signatures: z.array(z.looseObject({ keyid: z.string(), sig: z.string() })).min(1),
});
export type ProvenanceEnvelope = z.infer<typeof ProvenanceEnvelope>;

export const listTrusts = op({
  id: 'listTrusts',
  method: 'GET',
  path: '/publishers/{publisherId}/trusts',
  summary: "A publisher's trusted CI workflows (owner only)",
  auth: 'user',
  response: z.array(Trust),
});
export const addTrust = op({
  id: 'addTrust',
  method: 'POST',
  path: '/publishers/{publisherId}/trusts',
  summary: 'Trust a CI workflow to publish for the publisher, or one of its nodes, without a stored token (owner only)',
  auth: 'user',
  body: AddTrustBody,
  status: 201,
  response: Trust,
});
export const removeTrust = op({
  id: 'removeTrust',
  method: 'DELETE',
  path: '/publishers/{publisherId}/trusts/{trustId}',
  summary: 'Stop trusting a CI workflow; its publish tokens stop working (owner only)',
  auth: 'user',
  status: 204,
});
export const exchangeOidcToken = op({
  id: 'exchangeOidcToken',
  method: 'POST',
  path: '/oidc/exchange',
  summary:
    "Exchange a CI job's OIDC token, matched against a registered trust, for a token that publishes and uploads for 15 minutes",
  auth: 'none',
  body: ExchangeBody,
  status: 201,
  response: ExchangedToken,
});
export const getRegistryKeys = op({
  id: 'getRegistryKeys',
  method: 'GET',
  path: '/.well-known/nodereg-keys',
  summary: 'The public keys provenance statements are signed with',
  auth: 'none',
  response: RegistryKeys,
});
export const getVersionProvenance = op({
  id: 'getVersionProvenance',
  method: 'GET',
  path: '/nodes/{nodeId}/versions/{version}/provenance',
  summary: "A version's provenance: an in-toto statement (SLSA provenance) in a DSSE envelope signed by the registry",
  auth: 'none',
  response: ProvenanceEnvelope,
});

export const trustOperations = [
  listTrusts,
  addTrust,
  removeTrust,
  exchangeOidcToken,
  getRegistryKeys,
  getVersionProvenance,
];
