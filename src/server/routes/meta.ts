import type { RouteModule } from '../context.js';
import { openapiDocument } from '../../contract/openapi.js';
import { MAX_ARCHIVE_ENTRIES } from '../../contract/limits.js';
import { getLimits, health, openapiDocument as openapiOperation, ready } from '../../contract/registry.js';
import { route } from '../route.js';

/** Liveness, readiness, the archive limits and the OpenAPI document. */
export const registerMetaRoutes: RouteModule = (app, ctx) => {
  route(app, ctx, health, () => ({ ok: true, version: ctx.options.version }), { ignoreToken: true });
  // For a load balancer: a database out of reach is the 503 every route answers then (index.ts).
  route(app, ctx, ready, async () => {
    await ctx.store.ping();
    return { ok: true, version: ctx.options.version };
  });
  route(app, ctx, getLimits, () => ({ max_archive: ctx.options.maxArchive, max_unpacked: ctx.options.maxUnpacked, max_entries: MAX_ARCHIVE_ENTRIES }));
  // Built once per public URL, not per request: building it took ~8 ms of CPU, so a few clients
  // fetching it without a token held the event loop (/healthz p99 240 ms under 8 of them).
  let kept: { url: string; json: string } | undefined;
  route(app, ctx, openapiOperation, ({ c }) => {
    const url = ctx.publicUrl();
    if (kept?.url !== url) kept = { url, json: JSON.stringify(openapiDocument(ctx.options.version ?? '0.0.0', url)) };
    return c.body(kept.json, 200, { 'Content-Type': 'application/json' });
  });
};
