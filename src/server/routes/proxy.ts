import { Readable } from 'node:stream';
import type { Context } from 'hono';
import {
  extendVideo,
  getRelightTask,
  getSkinEnhancerTask,
  getVideoTask,
  relightImage,
  skinEnhance,
} from '../../contract/proxy.js';
import type { RouteModule } from '../context.js';
import { createBodyPreparer } from '../proxy/bodies.js';
import { createProxyService } from '../proxy/service.js';
import { UpstreamRejection } from '../proxy/upstream.js';
import type { AppEnv } from '../route.js';
import { route } from '../route.js';

/**
 * Runs a proxy call. A provider's 4xx keeps its status (DESIGN.md §4), which HttpError cannot
 * carry: it is answered here. The service answers the contract's shapes (typed as its response).
 */
async function relaying<T>(c: Context<AppEnv>, work: () => Promise<unknown>): Promise<T | Response> {
  try {
    return (await work()) as T;
  } catch (error) {
    if (!(error instanceof UpstreamRejection)) throw error;
    if (error.retryAfter) c.header('Retry-After', error.retryAfter);
    return c.json(error.body, error.status as 400);
  }
}

/** The AI proxy: three submissions of the spec, their status polls, and sandbox result files. */
export const registerProxyRoutes: RouteModule = (app, ctx) => {
  const proxy = createProxyService(ctx);
  ctx.onClose(() => proxy.close());

  // Submissions: the body (up to 25 MiB) is checked and prepared off the event loop when large.
  const bodies = createBodyPreparer();
  ctx.onClose(() => bodies.close());
  for (const [kind, operation] of [
    ['relight', relightImage],
    ['skin-enhancer', skinEnhance],
    ['video', extendVideo],
  ] as const) {
    route(app, ctx, operation, async ({ c, principal, rawBody }) => {
      const prepared = await bodies.prepare(kind, rawBody, proxy.mode(kind) === 'forward');
      return relaying(c, () => proxy.submit(kind, principal!, prepared.body, prepared));
    });
  }
  route(app, ctx, getRelightTask, ({ c, principal, params }) =>
    relaying(c, () => proxy.status('relight', params.task_id, principal!)),
  );
  route(app, ctx, getSkinEnhancerTask, ({ c, principal, params }) =>
    relaying(c, () => proxy.status('skin-enhancer', params.task_id, principal!)),
  );
  route(app, ctx, getVideoTask, ({ c, principal, params }) =>
    relaying(c, () => proxy.status('video', params.task_id, principal!)),
  );

  // Sandbox results: capability URLs, no token; the random name is the secret.
  app.get('/proxy/results/:name', async (c) => {
    const file = await proxy.resultFile(c.req.param('name'), c.req.header('range'));
    const range = file.range;
    return new Response(Readable.toWeb(file.stream) as ReadableStream, {
      status: range ? 206 : 200,
      headers: {
        'content-type': file.contentType,
        'content-length': String(range ? range.end - range.start + 1 : file.size),
        'accept-ranges': 'bytes',
        ...(range && { 'content-range': `bytes ${range.start}-${range.end}/${file.size}` }),
        'cache-control': 'private, max-age=86400, immutable',
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; sandbox",
      },
    });
  });
};
