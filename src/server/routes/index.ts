import type { RouteModule } from '../context.js';
import { registerMetaRoutes } from './meta.js';

// Every group of routes, in registration order.
export const routeModules: RouteModule[] = [registerMetaRoutes];
