// The review flow over the API (DESIGN.md §14): the CLI's `version appeal`, `admin queue` and
// `admin decide`; the web pages call the same services.
import { statusChanged } from '../webhooks/events.js';
import { appealVersion, decideVersion, reviewQueue } from '../../contract/review-flow.js';
import type { RouteModule } from '../context.js';
import { route } from '../route.js';
import * as flow from '../services/review-flow.js';
import { versionView } from '../views.js';

export const registerReviewFlowRoutes: RouteModule = (app, ctx) => {
  const { store } = ctx;
  route(app, ctx, appealVersion, async ({ params, principal, input }) => {
    const { version, publisherId } = await flow.appealVersion(store, principal, params, input().body.message);
    return versionView(version, publisherId, ctx.publicUrl(), true);
  });

  route(app, ctx, reviewQueue, async ({ principal }) => ({
    versions: (await flow.reviewQueue(store, principal)).map(({ version, publisherId }) => ({
      ...versionView(version, publisherId, ctx.publicUrl(), true),
      publisher_id: publisherId,
      review_requested: flow.reviewRequested(version),
    })),
  }));

  route(app, ctx, decideVersion, async ({ params, principal, input }) => {
    const { version, publisherId, previousStatus } = await flow.decideVersion(store, principal, params, input().body);
    statusChanged(ctx, publisherId, previousStatus, version);
    return versionView(version, publisherId, ctx.publicUrl(), true);
  });
};
