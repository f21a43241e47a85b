// A page as an HTTP answer: the document, its security headers, and the status; a refusal of the
// services (404, 403, 400) as a page with its status.
import type { Context } from 'hono';
import type { JSX } from 'hono/jsx/jsx-runtime';
import { HttpError } from '../errors.js';
import type { Viewer } from './layout.js';
import { ErrorPage } from './pages/error.js';

/** No script or style but ours, nothing from another origin, forms post only to us, no framing. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  // A page may show what only its signed-in viewer may see: no shared cache keeps it.
  'cache-control': 'no-store',
  vary: 'Accept, Cookie',
};

export async function sendPage(c: Context, page: JSX.Element, status = 200): Promise<Response> {
  const body = `<!doctype html>${await page}`;
  return c.body(body, status as 200, PAGE_HEADERS);
}

/** The page (or the answer, a redirect) `render` makes; a refusal it throws as a page with its status. */
export async function answerPage(
  c: Context,
  viewer: Viewer | null,
  render: () => Promise<JSX.Element | Response>,
): Promise<Response> {
  try {
    const made = await render();
    return made instanceof Response ? made : await sendPage(c, made);
  } catch (error) {
    if (!(error instanceof HttpError) || error.status >= 500) throw error;
    return sendPage(c, <ErrorPage viewer={viewer} status={error.status} message={error.message} />, error.status);
  }
}
