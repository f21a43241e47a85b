import type { RouteModule } from '../context.js';
import { registerMetaRoutes } from './meta.js';
import { registerProxyRoutes } from './proxy.js';

// Every group of routes, in registration order.
export const routeModules: RouteModule[] = [registerMetaRoutes, registerProxyRoutes];
