// The operator's routes (src/contract/admin.ts): admins only. Parse, call a service, answer.
import { collectArchives, releaseArchiveClaim } from '../../contract/admin.js';
import type { RouteModule } from '../context.js';
import { forbidden } from '../errors.js';
import { route } from '../route.js';
import { collectArchives as collect } from '../services/archive-gc.js';
import { releaseClaim } from '../services/release-claim.js';

export const registerAdminRoutes: RouteModule = (app, ctx) => {
  route(app, ctx, releaseArchiveClaim, async ({ params, principal }) => {
    if (!principal?.admin) throw forbidden("only an admin may release an upload's claim");
    await releaseClaim(ctx, params.nodeId, params.version);
    return new Response(null, { status: 204 });
  });
  route(app, ctx, collectArchives, async ({ principal, input }) => {
    if (!principal?.admin) throw forbidden('only an admin may collect archives');
    const { body } = input();
    return collect(ctx, { graceSeconds: body.grace_seconds, dryRun: body.dry_run });
  });
};
