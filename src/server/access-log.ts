// One line per answer (`serve --log`), and the request's metrics, written by a middleware that runs
// first, so that every answer the app gives counts, refusals of the connection guards (src/server/http/)
// included. The line is written once the answer's last byte is sent: its duration is the whole answer's.
// Each request has an id (its X-Request-Id when that is a sane one, else a new one), echoed in the
// answer, kept on the context and ending the lines logged about the request (its access line, the
// error an answer reports: app.ts).
import { randomUUID } from 'node:crypto';
import type { HttpBindings } from '@hono/node-server';
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { requestCounter, type Metrics } from './metrics.js';
import type { AppEnv } from './route.js';

type Log = (line: string, level?: 'warn' | 'error') => void;

/** An X-Request-Id kept as given: bounded, and of characters that cannot break a log line. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@+=-]{1,128}$/;

export const requestIdOf = (given: string | undefined) =>
  given !== undefined && SANE_REQUEST_ID.test(given) ? given : randomUUID();

/**
 * The pattern of the request's route (`/nodes/:nodeId`), also when a middleware answered for it (a
 * 429); never the raw path. `unmatched` for none.
 */
const routeOf = (c: Context<AppEnv>) => matchedRoutes(c).find((route) => route.method !== 'ALL')?.path ?? 'unmatched';

/** The access log's line for one answer. */
export const accessLine = (
  c: Context<AppEnv>,
  answer: { status: number; ms: number; bytes: number; address: string; id: string },
) => {
  const user = (c.get('principal') ?? c.get('authenticated')?.principal)?.userId ?? '-';
  return `${c.req.method} ${c.req.path} ${answer.status} ${answer.ms.toFixed(1)}ms ${answer.bytes}B ${answer.address} user=${user} request_id=${answer.id}`;
};

/**
 * The request's id, its metrics and its access line (when `log` is given). `address` is the client's
 * (the peer's, or the one a trusted proxy names).
 */
export function requestLog(
  metrics: Metrics,
  log: Log | undefined,
  address: (c: Context<AppEnv>) => string,
): MiddlewareHandler<AppEnv> {
  const counted = requestCounter(metrics);
  return async (c, next) => {
    const started = performance.now();
    const id = requestIdOf(c.req.header('x-request-id'));
    const bindings = c.env as HttpBindings | undefined;
    const socket = bindings?.incoming?.socket;
    const before = socket?.bytesWritten ?? 0;
    // Set on the Node response, which adds it to whatever answer is written: reading c.res.headers after
    // the route would make a Headers object of every answer's headers, and copy them out again.
    bindings?.outgoing?.setHeader('X-Request-Id', id);
    c.set('requestId', id);
    await next();
    const done = () => {
      const ms = performance.now() - started;
      counted(routeOf(c), c.req.method, c.res.status, ms / 1000);
      const bytes = (socket?.bytesWritten ?? before) - before;
      log?.(accessLine(c, { status: c.res.status, ms, bytes, address: address(c), id }));
    };
    const outgoing = bindings?.outgoing;
    if (outgoing && !outgoing.writableFinished && !outgoing.destroyed) outgoing.once('close', done);
    else done();
  };
}
