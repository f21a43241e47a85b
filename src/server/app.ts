// The hono app: the middleware every request passes (access log, the connection guards' refusals,
// HEAD, rate limit), then the routes, then the answers to no route and to errors.
import { IncomingMessage } from 'node:http';
import { getRequestListener, RequestError, type HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { noRoute } from '../contract/errors.js';
import { requestLog } from './access-log.js';
import type { ServerContext } from './context.js';
import { HttpError } from './errors.js';
import { closeAfterResponse, guardRefusals } from './http/index.js';
import { internalError } from './internal-error.js';
import { clientAddress, resolveClientAddress } from './http/client-address.js';
import { rateLimit } from './rate-limit.js';
import type { AppEnv } from './route.js';
import { routeModules } from './routes/index.js';
import { mirrorReads } from './mirror/reads.js';
import type { ServerLog } from './repeated-warnings.js';

/**
 * The answer to an error: ours as it is, any other through internalError (503 or 500, logged with the
 * request's id).
 */
function answerError(ctx: ServerContext, error: unknown, c: Context<AppEnv>): Response {
  const { options } = ctx;
  const answer =
    error instanceof HttpError ? error : internalError(error, { ...options, log: logAboutRequest(c, options.log) });
  const incoming = (c.env as HttpBindings | undefined)?.incoming;
  // An answer given before the body was read (an upload refused early): the connection closes after it.
  if (
    answer.headers?.Connection === 'close' &&
    incoming instanceof IncomingMessage &&
    !incoming.complete &&
    !incoming.socket.destroyed
  ) {
    const { Connection: _close, ...headers } = answer.headers;
    return closeAfterResponse(incoming, answer.status, headers, JSON.stringify(answer.body()));
  }
  for (const [name, value] of Object.entries(answer.headers ?? {})) c.header(name, value);
  return c.json(answer.body(), answer.status as 400);
}

/** `log`, each line given as one about this request. */
function logAboutRequest(c: Context<AppEnv>, log: ServerLog | undefined): ServerLog | undefined {
  const id = c.get('requestId');
  return log && id ? (line, level, kind) => log(line, level, kind, id) : log;
}

/** HEAD is answered by the GET route with its body dropped: cancel that body, or a streamed file stays open. */
const headWithoutBody = (c: Context<AppEnv>, next: () => Promise<void>) =>
  c.req.method === 'HEAD' ? headOf(c, next) : next();

const headOf = async (c: Context<AppEnv>, next: () => Promise<void>) => {
  await next();
  await c.res.body?.cancel().catch(() => {});
};

export function buildApp(ctx: ServerContext): Hono<AppEnv> {
  const { options } = ctx;
  const app = new Hono<AppEnv>();
  const log = options.accessLog === undefined ? options.log : options.accessLog || undefined;
  app.use(resolveClientAddress(options.trustProxy));
  app.use(requestLog(ctx.metrics, log, clientAddress));
  app.use(guardRefusals);
  app.use(headWithoutBody);
  if (options.rateLimit !== undefined)
    app.use(
      rateLimit(options.rateLimit, ctx.authenticate, {
        refused: () => ctx.metrics.rateLimited.inc(),
        address: clientAddress,
        // instances on one database share the limit (docs/decisions.md)
        shared: options.database?.shared ? ctx.store.countRequest?.bind(ctx.store) : undefined,
      }),
    );
  // Before the routes, so that it sees their 404s: those of names this registry does not hold go upstream.
  app.use(mirrorReads(ctx));
  for (const register of routeModules) register(app, ctx);
  app.notFound((c) =>
    c.json(new HttpError('not_found', noRoute(c.req.method, new URL(c.req.url).pathname)).body(), 404),
  );
  app.onError((error, c) => answerError(ctx, error, c));
  return app;
}

/**
 * The node:http listener of the app. A request the adapter cannot turn into a URL (a backslash in the
 * path, a bad Host header) is a RequestError before hono sees it: answered in our shape too.
 */
export function appListener(app: Hono<AppEnv>, ctx: ServerContext) {
  return getRequestListener(app.fetch, {
    errorHandler: (error) => {
      if (error instanceof RequestError)
        return Response.json(new HttpError('invalid_request', `malformed request: ${error.message}`).body(), {
          status: 400,
        });
      const answer = internalError(error, ctx.options);
      return Response.json(answer.body(), { status: answer.status, headers: answer.headers });
    },
  });
}
