// A publisher's webhooks (src/contract/webhooks.ts; services/webhooks.ts): parse, call a service, answer.
import { addWebhook, listWebhooks, removeWebhook } from '../../contract/webhooks.js';
import type { RouteModule } from '../context.js';
import { route } from '../route.js';
import * as webhooks from '../services/webhooks.js';

export const registerWebhookRoutes: RouteModule = (app, ctx) => {
  const { store } = ctx;
  const deps = { store, allowPrivate: ctx.options.webhooks?.allowPrivate === true };
  route(app, ctx, listWebhooks, async ({ params, principal }) =>
    webhooks.listWebhooks(store, principal!, params.publisherId),
  );
  route(app, ctx, addWebhook, async ({ params, principal, input }) =>
    webhooks.addWebhook(deps, principal!, params.publisherId, () => input().body),
  );
  route(app, ctx, removeWebhook, async ({ params, principal }) => {
    await webhooks.removeWebhook(store, principal!, params.publisherId, params.webhookId);
    return new Response(null, { status: 204 });
  });
};
