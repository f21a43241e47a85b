// One line per answer (`serve --log`), written by a middleware that runs first, so that every answer
// the app gives is logged, refusals of the connection guards (src/server/http/) included.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './route.js';

/** The access log's line for one request. */
export const accessLine = (method: string, path: string, status: number, started: number) =>
  `${method} ${path} ${status} ${(performance.now() - started).toFixed(1)}ms`;

/** Logs each request once its answer is known: method, path (no query), status, duration. */
export function accessLog(log: (line: string) => void): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    log(accessLine(c.req.method, c.req.path, c.res.status, started));
  };
}
