// Trusted publishing (DESIGN.md §15): the trusts a publisher's owners register, the exchange of a CI
// job's OIDC token for a 15-minute publish token, and who such a token is when it comes back.
import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import {
  EXCHANGED_TOKEN_PREFIX,
  EXCHANGED_TOKEN_TTL_MS,
  type AddTrustBody,
  type ExchangeBody,
} from '../../contract/trust.js';
import { accessTo, allowMutation, requireNodeOf, requirePublisher, requireRole } from '../access.js';
import { hashToken } from '../accounts/tokens.js';
import { badRequest, forbidden, HttpError, notFound } from '../errors.js';
import type { Principal } from '../route.js';
import type { RegistryStore } from '../store/registry-store.js';
import type { ExchangeRow, TrustRow } from '../store/trusts.js';
import { jobOf, mismatch, type Job } from '../trusted/claims.js';
import type { OidcVerifier } from '../trusted/oidc.js';

export interface TrustDeps {
  store: RegistryStore;
  oidc: OidcVerifier;
  /** The issuers a trust may name. */
  issuers: Record<string, string>;
}

/** The publisher, checked for an owner of it (404, 403). */
async function ownedPublisher(store: RegistryStore, principal: Principal, publisherId: string) {
  const publisher = await requirePublisher(store, publisherId);
  const access = await accessTo(store, principal, publisher.id);
  allowMutation(access, 'owner', publisher);
  return publisher;
}

export async function listTrusts(store: RegistryStore, principal: Principal, publisherId: string) {
  const publisher = await requirePublisher(store, publisherId);
  requireRole(await accessTo(store, principal, publisher.id), 'owner');
  return store.listTrusts(publisher.id);
}

export async function addTrust(
  deps: TrustDeps,
  principal: Principal,
  publisherId: string,
  body: () => z.output<typeof AddTrustBody>,
): Promise<TrustRow> {
  const publisher = await ownedPublisher(deps.store, principal, publisherId);
  const input = body();
  if (!(input.issuer in deps.issuers))
    throw badRequest(
      `issuer ${input.issuer} is not one this registry knows (${Object.keys(deps.issuers).join(', ')})`,
      [{ path: 'issuer', message: `must be one of ${Object.keys(deps.issuers).join(', ')}` }],
    );
  // A node not published yet may be named: its first version comes from the trusted workflow.
  const node = input.node_id === undefined ? undefined : await deps.store.getNode(input.node_id);
  if (node) await requireNodeOf(deps.store, publisher, node.id);
  return deps.store.addTrust({
    publisher_id: publisher.id,
    node_id: node?.id ?? input.node_id ?? null,
    issuer: input.issuer,
    repository: input.repository,
    workflow: input.workflow,
    environment: input.environment ?? null,
    ref: input.ref ?? null,
    created_by: principal.userId,
  });
}

export async function removeTrust(store: RegistryStore, principal: Principal, publisherId: string, trustId: string) {
  const publisher = await ownedPublisher(store, principal, publisherId);
  if (!(await store.removeTrust(publisher.id, trustId)))
    throw notFound(`publisher ${publisher.id} has no trust ${trustId}`);
}

/** The command that registers a trust this job would match, for the refusal's hint. */
function registerHint(publisherId: string, job: Job, issuerName: string, nodeId: string | undefined): string {
  const words = [
    'nodereg',
    'publisher',
    'trust',
    'add',
    publisherId,
    '--repository',
    job.repository,
    '--workflow',
    job.workflow,
  ];
  if (issuerName !== 'github') words.push('--issuer', issuerName);
  if (job.environment) words.push('--environment', job.environment);
  if (nodeId) words.push('--node', nodeId);
  return `an owner of ${publisherId} registers this workflow with \`${words.map(shellWord).join(' ')}\``;
}
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

/** The trust of the publisher (for this node) that the job matches, or the refusal naming the claim. */
function matchingTrust(
  trusts: TrustRow[],
  issuerName: string,
  job: Job,
  body: z.output<typeof ExchangeBody>,
): TrustRow {
  const candidates = trusts.filter(
    (t) => t.node_id === null || body.node_id === undefined || t.node_id === body.node_id,
  );
  const hint = registerHint(body.publisher_id, job, issuerName, body.node_id);
  if (candidates.length === 0) {
    const message = `publisher ${body.publisher_id} trusts no CI workflow${body.node_id ? ` for node ${body.node_id}` : ''}; nothing was exchanged`;
    throw new HttpError('forbidden', message, [{ path: 'token.repository', message }], hint);
  }
  const problems = candidates.map((trust) => ({ trust, problem: mismatch(trust, issuerName, job) }));
  const match = problems.find((p) => p.problem === undefined);
  if (match) return match.trust;
  // the trust of the same repository says most, when there is one
  const closest = problems.find((p) => p.problem!.claim !== 'repository' && p.problem!.claim !== 'iss') ?? problems[0];
  const { claim, message } = closest.problem!;
  const text = `${message} (trust ${closest.trust.id} of publisher ${body.publisher_id}); nothing was exchanged`;
  throw new HttpError('forbidden', text, [{ path: `token.${claim}`, message }], hint);
}

/** `POST /oidc/exchange`: the OIDC token verified and matched to a trust, then a 15-minute publish token. */
export async function exchangeToken(deps: TrustDeps, body: z.output<typeof ExchangeBody>) {
  const { issuerName, claims } = await deps.oidc.verify(body.token);
  const job = jobOf(claims.iss!, claims);
  const publisher = await deps.store.getPublisher(body.publisher_id);
  if (!publisher) throw notFound(`publisher ${body.publisher_id} not found`);
  if (publisher.status === 'PublisherStatusBanned') throw forbidden(`publisher ${publisher.id} is banned`);
  const trust = matchingTrust(await deps.store.listTrusts(publisher.id), issuerName, job, body);
  const token = EXCHANGED_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + EXCHANGED_TOKEN_TTL_MS).toISOString();
  const exchange = await deps.store.createExchange({
    hash: hashToken(token),
    trust_id: trust.id,
    publisher_id: publisher.id,
    node_id: trust.node_id,
    user_id: trust.created_by,
    claims: JSON.stringify(job),
    expires_at: expiresAt,
  });
  return {
    token,
    expires_at: expiresAt,
    publisher_id: publisher.id,
    ...(exchange.node_id ? { node_id: exchange.node_id } : {}),
    trust_id: trust.id,
  };
}

const isLive = (exchange: ExchangeRow | undefined): exchange is ExchangeRow =>
  exchange !== undefined && Date.parse(exchange.expires_at) > Date.now();

/** The principal of an exchanged token while it lives; null once expired, or its trust removed. */
export async function exchangedPrincipal(store: RegistryStore, token: string): Promise<Principal | null> {
  const exchange = await store.useExchange(hashToken(token));
  if (!isLive(exchange)) return null;
  return {
    kind: 'oidc',
    userId: exchange.user_id,
    admin: false,
    tokenId: exchange.id,
    publisherId: exchange.publisher_id,
    nodeId: exchange.node_id,
  };
}

/** The job an upload URL's token was exchanged for (provenance records it); undefined for other tokens. */
export async function exchangedJob(store: RegistryStore, tokenId: string | undefined): Promise<Job | undefined> {
  if (!tokenId?.startsWith('oidc_')) return undefined;
  const exchange = await store.getExchange(tokenId);
  if (!exchange)
    throw forbidden(
      'the trust whose token published this version has been removed since; publish it again for a fresh upload URL',
    );
  return JSON.parse(exchange.claims) as Job;
}
