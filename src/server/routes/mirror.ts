// The mirror's operator routes (src/contract/mirror.ts): admins read the cache and sync nodes into it.
// Parse, call mirror/operator.ts, render. A registry without --upstream answers them 404.
import { getMirroredNode, getMirrorStatus, listUpstreamNodes, syncMirroredNode } from '../../contract/mirror.js';
import type { RouteModule, ServerContext } from '../context.js';
import { conflict, forbidden, notFound } from '../errors.js';
import { describeEntry, mirrorStatus, syncNode, upstreamNodes } from '../mirror/operator.js';
import type { Principal } from '../route.js';
import { route } from '../route.js';

/** The mirror, for an admin: 404 without one, 403 for anyone else. */
function mirrorFor(ctx: ServerContext, principal: Principal | null) {
  if (!ctx.mirror) throw notFound('this registry mirrors no upstream (serve --upstream URL)');
  if (!principal?.admin) throw forbidden("only an admin may read or sync the mirror's cache");
  return ctx.mirror;
}

export const registerMirrorRoutes: RouteModule = (app, ctx) => {
  route(app, ctx, getMirrorStatus, ({ principal }) => mirrorStatus(mirrorFor(ctx, principal)));

  route(app, ctx, getMirroredNode, async ({ params, principal }) => {
    const mirror = mirrorFor(ctx, principal);
    if (await ctx.store.getNode(params.nodeId))
      throw conflict(`node ${params.nodeId} is a node of this registry, not a mirrored one`);
    const entry = (await mirror.cache.get(params.nodeId)) ?? (await mirror.read(params.nodeId)).entry;
    return describeEntry(mirror, entry);
  });

  route(app, ctx, syncMirroredNode, async ({ params, principal, input }) => {
    const mirror = mirrorFor(ctx, principal);
    if (await ctx.store.getNode(params.nodeId))
      throw conflict(`node ${params.nodeId} is a node of this registry: nothing to sync`);
    return syncNode(mirror, params.nodeId, input().body.versions);
  });

  route(app, ctx, listUpstreamNodes, async ({ principal, input }) => {
    const mirror = mirrorFor(ctx, principal);
    const { publisher, page, limit } = input().query;
    return upstreamNodes(mirror, ctx.store, publisher, page, limit);
  });
};
