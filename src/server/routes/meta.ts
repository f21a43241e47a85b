import type { RouteModule } from '../context.js';
import { openapiDocument } from '../../contract/openapi.js';
import { health, openapiDocument as openapiOperation } from '../../contract/registry.js';
import { route } from '../route.js';

/** Liveness and the OpenAPI document. */
export const registerMetaRoutes: RouteModule = (app, ctx) => {
  route(app, ctx, health, () => ({ ok: true, version: ctx.options.version }));
  route(app, ctx, openapiOperation, () => openapiDocument(ctx.options.version ?? '0.0.0', ctx.publicUrl()));
};
