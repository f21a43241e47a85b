// Every group of routes, in registration order.
//
// Adding a route:
//  1. Declare the operation in src/contract/ (path, method, params, query, body, response): the wire rule
//     lives there once, and the OpenAPI document and the client derive from it.
//  2. In the group's file here (or a new file, listed below), `route(app, ctx, operation, handler)`
//     (src/server/route.ts) checks 415/413, the token and the path parameters; the handler
//       parses: the 404/403 checks first, then `input()` for the 400s (DESIGN.md §2),
//       calls one service function (src/server/services/), passing `ctx` as its dependencies, and
//       renders the answer with a view (src/server/views.ts).
//  3. Logic that more than one route needs goes into a service, never into another route file.
// Middleware every request passes (access log, guards, rate limit) is composed in src/server/app.ts.
import type { RouteModule } from '../context.js';
import { registerAccountRoutes } from './accounts.js';
import { registerMetaRoutes } from './meta.js';
import { registerConsumerRoutes } from './consumers.js';
import { registerProxyRoutes } from './proxy.js';
import { registerReadRoutes } from './reads.js';
import { registerRegistryRoutes } from './registry.js';
import { registerReviewFlowRoutes } from './review-flow.js';
import { registerUploadRoutes } from './uploads.js';
import { registerMirrorRoutes } from './mirror.js';
import { registerTrustedRoutes } from './trusted.js';
import { registerWebRoutes } from '../web/index.js';
import { registerAdminRoutes } from './admin.js';
import { registerWebhookRoutes } from './webhooks.js';

export const routeModules: RouteModule[] = [
  // First: a browser's GET at a page's path is answered by the page, any other request goes on (web/index.ts).
  registerWebRoutes,
  registerMetaRoutes,
  registerReadRoutes,
  registerConsumerRoutes,
  registerRegistryRoutes,
  registerAccountRoutes,
  registerReviewFlowRoutes,
  registerUploadRoutes,
  registerProxyRoutes,
  registerMirrorRoutes,
  registerTrustedRoutes,
  registerAdminRoutes,
  registerWebhookRoutes,
];
