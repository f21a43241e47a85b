import { createReadStream } from 'node:fs';
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
import type { TaskKind } from '../proxy/kinds.js';
import { createProxyService, type TaskBodies } from '../proxy/service.js';
import { UpstreamRejection } from '../proxy/upstream.js';
import type { AppEnv, Principal } from '../route.js';
import { route } from '../route.js';

/** A provider's 4xx keeps its status (DESIGN.md §4), which HttpError cannot carry: answer it here. */
async function relaying(c: Context<AppEnv>, work: () => Promise<Record<string, unknown>>): Promise<Response | Record<string, unknown>> {
  try {
    return await work();
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

  const submit = <K extends TaskKind>(kind: K) =>
    (rc: { c: Context<AppEnv>; principal: Principal | null; input(): { body: unknown } }) =>
      relaying(rc.c, () => proxy.submit(kind, rc.principal!, rc.input().body as TaskBodies[K])) as never;
  route(app, ctx, relightImage, submit('relight'));
  route(app, ctx, skinEnhance, submit('skin-enhancer'));
  route(app, ctx, extendVideo, submit('video'));

  const status = (kind: TaskKind) =>
    (rc: { c: Context<AppEnv>; principal: Principal | null; params: Record<string, string> }) =>
      relaying(rc.c, () => proxy.status(kind, rc.params.task_id, rc.principal!)) as never;
  route(app, ctx, getRelightTask, status('relight'));
  route(app, ctx, getSkinEnhancerTask, status('skin-enhancer'));
  route(app, ctx, getVideoTask, status('video'));

  // Sandbox results: capability URLs, no token; the random name is the secret.
  app.get('/proxy/results/:name', (c) => {
    const file = proxy.resultFile(c.req.param('name'));
    return new Response(Readable.toWeb(createReadStream(file.path)) as ReadableStream, {
      headers: {
        'content-type': file.contentType,
        'content-length': String(file.size),
        'cache-control': 'private, max-age=86400, immutable',
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; sandbox",
      },
    });
  });
};
