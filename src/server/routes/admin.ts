// The operator's routes (src/contract/admin.ts): admins only. Parse, call a service, answer.
import {
  collectArchives,
  deleteUser,
  disableUser,
  enableUser,
  listTokensOfUser,
  listAudit,
  listUsers,
  releaseArchiveClaim,
  revokeTokenOfUser,
} from '../../contract/admin.js';
import type { RouteModule } from '../context.js';
import { route } from '../route.js';
import { collectArchives as collect } from '../services/archive-gc.js';
import { invitee } from '../services/accounts.js';
import { releaseClaim } from '../services/release-claim.js';
import { versionTarget } from '../services/audit.js';
import {
  deleteNamedUser,
  requireAdmin,
  revokeTokenOf,
  setDisabled,
  ownedTokenInfo,
  listedUserView,
} from '../services/user-lifecycle.js';

export const registerAdminRoutes: RouteModule = (app, ctx) => {
  const { store } = ctx;
  route(app, ctx, releaseArchiveClaim, async ({ params, principal }) => {
    requireAdmin(principal, "release an upload's claim");
    const released = await releaseClaim(ctx, params.nodeId, params.version);
    await store.audit({ actorId: principal!.userId, action: 'claim.release', target: versionTarget(released) });
    return new Response(null, { status: 204 });
  });
  route(app, ctx, collectArchives, async ({ principal, input }) => {
    requireAdmin(principal, 'collect archives');
    const { body } = input();
    return collect(ctx, { graceSeconds: body.grace_seconds, dryRun: body.dry_run });
  });

  route(app, ctx, listAudit, async ({ principal, input }) => {
    requireAdmin(principal, 'read the audit log');
    const { page, limit, action, target } = input().query;
    const { rows, total } = await store.listAudit({ action, target, offset: (page - 1) * limit, limit });
    return { entries: rows, total, page, limit, totalPages: Math.ceil(total / limit) };
  });

  route(app, ctx, listUsers, async ({ principal, input }) => {
    requireAdmin(principal, 'list users');
    const { page, limit } = input().query;
    const { rows, total } = await store.listUsers({ offset: (page - 1) * limit, limit });
    return { users: rows.map(listedUserView), total, page, limit, totalPages: Math.ceil(total / limit) };
  });

  route(app, ctx, disableUser, async ({ params, principal }) => {
    requireAdmin(principal, 'disable users');
    return setDisabled(store, params.user, true, principal!.userId);
  });

  route(app, ctx, enableUser, async ({ params, principal }) => {
    requireAdmin(principal, 'enable users');
    return setDisabled(store, params.user, false, principal!.userId);
  });

  route(app, ctx, deleteUser, async ({ params, principal, input }) => {
    requireAdmin(principal, 'delete users');
    await deleteNamedUser(store, params.user, input().query, principal!.userId);
    return new Response(null, { status: 204 });
  });

  route(app, ctx, listTokensOfUser, async ({ params, principal }) => {
    requireAdmin(principal, "list another user's tokens");
    const user = await invitee(store, params.user);
    return (await store.listTokens({ madeBy: user.id })).map(ownedTokenInfo);
  });

  route(app, ctx, revokeTokenOfUser, async ({ params, principal }) => {
    requireAdmin(principal, "revoke another user's tokens");
    await revokeTokenOf(store, params.user, params.tokenId, principal!.userId);
    return new Response(null, { status: 204 });
  });
};
