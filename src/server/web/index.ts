// The registry's web pages (DESIGN.md §14): a GET whose Accept ranks HTML first gets a page; every
// other request at the same path goes on to the JSON route as before (one handler answers each).
// Forms post to paths under /web/ that only the pages use.
import type { Context, Hono } from 'hono';
import type { JSX } from 'hono/jsx/jsx-runtime';
import type { RouteModule, ServerContext } from '../context.js';
import type { AppEnv } from '../route.js';
import { SCRIPT, STYLESHEET } from './assets.js';
import { registerSessionForms, signInPage } from './forms.js';
import type { Viewer } from './layout.js';
import { wantsHtml } from './negotiate.js';
import { homePage, nodePage, publisherPage, versionPage } from './pages.js';
import { answerPage } from './render.js';
import { registerReviewForms, reviewPage } from './review-forms.js';
import { viewerOf } from './session.js';

type Render = (ctx: ServerContext, c: Context<AppEnv>, viewer: Viewer | null) => Promise<JSX.Element>;

function registerAssets(app: Hono<AppEnv>) {
  for (const asset of [STYLESHEET, SCRIPT]) {
    app.get(asset.path, (c) =>
      c.body(asset.body, 200, {
        'content-type': asset.type,
        'cache-control': 'public, max-age=31536000, immutable',
        etag: asset.etag,
        'x-content-type-options': 'nosniff',
      }),
    );
  }
}

function registerPages(app: Hono<AppEnv>, ctx: ServerContext) {
  const page = (path: string, render: Render) =>
    app.get(path, (c, next) => (wantsHtml(c.req.method, c.req.header('accept')) ? htmlPage(c, render) : next()));
  const htmlPage = async (c: Context<AppEnv>, render: Render) => {
    const viewer = await viewerOf(ctx, c);
    return answerPage(c, viewer, () => render(ctx, c, viewer));
  };
  page('/', homePage);
  page('/nodes', homePage);
  page('/nodes/:nodeId', nodePage);
  page('/nodes/:nodeId/versions/:version', versionPage);
  page('/publishers/:publisherId', publisherPage);
  page('/web/sign-in', signInPage);
  page('/web/review', reviewPage);
}

export const registerWebRoutes: RouteModule = (app, ctx) => {
  registerAssets(app);
  registerPages(app, ctx);
  registerSessionForms(app, ctx);
  registerReviewForms(app, ctx);
};
