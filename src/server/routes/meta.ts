import type { RouteModule } from '../context.js';
import { openapiDocument } from '../../contract/openapi.js';
import { MAX_ARCHIVE_ENTRIES } from '../../contract/limits.js';
import { getLimits, health, openapiDocument as openapiOperation } from '../../contract/registry.js';
import { route } from '../route.js';

/** Liveness, the archive limits and the OpenAPI document. */
export const registerMetaRoutes: RouteModule = (app, ctx) => {
  route(app, ctx, health, () => ({ ok: true, version: ctx.options.version }));
  route(app, ctx, getLimits, () => ({ max_archive: ctx.options.maxArchive, max_unpacked: ctx.options.maxUnpacked, max_entries: MAX_ARCHIVE_ENTRIES }));
  route(app, ctx, openapiOperation, () => openapiDocument(ctx.options.version ?? '0.0.0', ctx.publicUrl()));
};
