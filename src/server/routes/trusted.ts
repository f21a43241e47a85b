// Trusted publishing (DESIGN.md §15; services/trusts.ts): a publisher's trusts, the OIDC exchange, the
// registry's provenance keys and a version's provenance.
import {
  addTrust,
  exchangeOidcToken,
  getRegistryKeys,
  getVersionProvenance,
  listTrusts,
  removeTrust,
  type Trust,
} from '../../contract/trust.js';
import { readableNode } from '../access.js';
import type { RouteModule } from '../context.js';
import { notFound } from '../errors.js';
import { route } from '../route.js';
import { findVersion } from '../services/nodes.js';
import * as trusts from '../services/trusts.js';
import type { TrustRow } from '../store/trusts.js';

const trustView = (row: TrustRow): Trust => ({
  id: row.id,
  publisher_id: row.publisher_id,
  ...(row.node_id ? { node_id: row.node_id } : {}),
  issuer: row.issuer,
  repository: row.repository,
  workflow: row.workflow,
  ...(row.environment ? { environment: row.environment } : {}),
  ...(row.ref ? { ref: row.ref } : {}),
  created_at: row.created_at,
});

export const registerTrustedRoutes: RouteModule = (app, ctx) => {
  const { store } = ctx;
  const deps = { store, oidc: ctx.trust.oidc, issuers: ctx.trust.issuers };

  route(app, ctx, listTrusts, async ({ params, principal }) =>
    (await trusts.listTrusts(store, principal!, params.publisherId)).map(trustView),
  );
  route(app, ctx, addTrust, async ({ params, principal, input }) =>
    trustView(await trusts.addTrust(deps, principal!, params.publisherId, () => input().body)),
  );
  route(app, ctx, removeTrust, async ({ params, principal }) => {
    await trusts.removeTrust(store, principal!, params.publisherId, params.trustId);
    return new Response(null, { status: 204 });
  });
  route(app, ctx, exchangeOidcToken, async ({ input }) => trusts.exchangeToken(deps, input().body));
  route(app, ctx, getRegistryKeys, () => ({
    keys: [{ keyid: ctx.trust.signing.keyid, algorithm: 'ed25519' as const, public_key: ctx.trust.signing.publicSpki }],
  }));
  route(app, ctx, getVersionProvenance, async ({ params, principal }) => {
    const { node } = await readableNode(store, principal, params.nodeId);
    const version = await findVersion(store, node, params.version);
    if (!version.provenance)
      throw notFound(
        `version ${version.version} of node ${node.id} has no provenance: it was not published from a trusted CI workflow`,
      );
    return JSON.parse(version.provenance);
  });
};
