import type { RouteModule } from '../context.js';
import { registerAccountRoutes } from './accounts.js';
import { registerMetaRoutes } from './meta.js';
import { registerConsumerRoutes } from './consumers.js';
import { registerProxyRoutes } from './proxy.js';
import { registerReadRoutes } from './reads.js';
import { registerRegistryRoutes } from './registry.js';
import { registerUploadRoutes } from './uploads.js';

// Every group of routes, in registration order.
export const routeModules: RouteModule[] = [
  registerMetaRoutes,
  registerReadRoutes,
  registerConsumerRoutes,
  registerRegistryRoutes,
  registerAccountRoutes,
  registerUploadRoutes,
  registerProxyRoutes,
];
