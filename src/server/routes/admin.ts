// The operator's routes (src/contract/admin.ts): admins only. Parse, call a service, answer.
import { releaseArchiveClaim } from '../../contract/admin.js';
import type { RouteModule } from '../context.js';
import { forbidden } from '../errors.js';
import { route } from '../route.js';
import { releaseClaim } from '../services/release-claim.js';

export const registerAdminRoutes: RouteModule = (app, ctx) => {
  route(app, ctx, releaseArchiveClaim, async ({ params, principal }) => {
    if (!principal?.admin) throw forbidden("only an admin may release an upload's claim");
    await releaseClaim(ctx, params.nodeId, params.version);
    return new Response(null, { status: 204 });
  });
};
