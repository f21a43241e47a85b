// Signing in with a pasted user token (DESIGN.md §14). The token is checked once and never kept in a
// URL, a page or the cookie: the cookie holds a random session id, HttpOnly, SameSite=Strict, Secure
// when the registry is reached over https; the store keeps only its hash, the user, the token it was
// opened with (revoking that token ends the session) and the session's CSRF token.
import { claimAddress } from '../services/accounts.js';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { ServerContext } from '../context.js';
import { forbidden, unauthorized } from '../errors.js';
import type { AppEnv } from '../route.js';
import type { Viewer } from './layout.js';

const SESSION_COOKIE = 'nodereg_session';
/** The sign-in form's CSRF token, before there is a session: the cookie and the form must match. */
const SIGN_IN_COOKIE = 'nodereg_sign_in';
/** How long a session lasts after signing in. */
export const SESSION_TTL_MS = 8 * 60 * 60_000;
const SIGN_IN_TTL_S = 30 * 60;

const hashOf = (id: string) => createHash('sha256').update(id).digest('hex');
const randomToken = () => randomBytes(32).toString('base64url');

const sameSecret = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

function cookieOptions(ctx: ServerContext, c: Context, maxAge: number) {
  const secure = new URL(c.req.url).protocol === 'https:' || ctx.publicUrl().startsWith('https:');
  return { httpOnly: true, sameSite: 'Strict' as const, secure, path: '/', maxAge };
}

/** The signed-in viewer of a request: a live session whose token is still live; null otherwise. */
export async function viewerOf(ctx: ServerContext, c: Context<AppEnv>): Promise<Viewer | null> {
  const id = getCookie(c, SESSION_COOKIE);
  if (!id) return null;
  const session = await ctx.store.getSession(hashOf(id));
  if (!session) return null;
  const token = await ctx.store.getToken(session.token_id);
  const user = token && !token.revoked_at ? await ctx.store.getUser(session.user_id) : undefined;
  if (!token || !user || user.disabled_at) return null;
  return {
    principal: { kind: 'user', userId: user.id, admin: user.admin, tokenId: token.id },
    name: user.name,
    csrf: session.csrf,
  };
}

/** A new sign-in form's CSRF token, set as its cookie too. */
export function signInToken(ctx: ServerContext, c: Context): string {
  const token = getCookie(c, SIGN_IN_COOKIE) ?? randomToken();
  setCookie(c, SIGN_IN_COOKIE, token, cookieOptions(ctx, c, SIGN_IN_TTL_S));
  return token;
}

/** Opens a session for a user token (a publisher's PAT cannot sign in); 401 for any other. */
export async function signIn(ctx: ServerContext, c: Context, token: string): Promise<void> {
  const principal = token ? await ctx.authenticate(token) : null;
  if (!principal || principal.kind !== 'user')
    throw unauthorized(
      "that is not a live user token (a publisher token cannot sign in): the registry's admin makes a user's first one with `nodereg user create`; `nodereg token create --user` makes more, run with a token the registry accepts",
    );
  await claimAddress(ctx.store, await ctx.store.getUser(principal.userId));
  const id = randomToken();
  const expires = new Date(Date.now() + SESSION_TTL_MS);
  await ctx.store.createSession(hashOf(id), {
    user_id: principal.userId,
    token_id: principal.tokenId,
    csrf: randomToken(),
    expires_at: expires.toISOString(),
  });
  deleteCookie(c, SIGN_IN_COOKIE, { path: '/' });
  setCookie(c, SESSION_COOKIE, id, cookieOptions(ctx, c, SESSION_TTL_MS / 1000));
}

export async function signOut(ctx: ServerContext, c: Context): Promise<void> {
  const id = getCookie(c, SESSION_COOKIE);
  if (id) await ctx.store.deleteSession(hashOf(id));
  deleteCookie(c, SESSION_COOKIE, { path: '/' });
}

/**
 * Refuses a form post that a page of this registry did not send: from another origin (Origin, else
 * Sec-Fetch-Site, must say ours), or without the CSRF token of the viewer's session (or, to sign in,
 * of the sign-in cookie).
 */
export function checkForm(ctx: ServerContext, c: Context, viewer: Viewer | null, sent: string | undefined): void {
  const origin = c.req.header('origin');
  const ours = [new URL(c.req.url).origin, new URL(ctx.publicUrl()).origin];
  // A browser sends `Origin: null` in some cases (a page under a no-referrer policy): then Sec-Fetch-Site says.
  const sameOrigin =
    origin && origin !== 'null' ? ours.includes(origin) : c.req.header('sec-fetch-site') === 'same-origin';
  if (!sameOrigin) throw forbidden('this form was sent from another site; use the page of this registry');
  const expected = viewer ? viewer.csrf : getCookie(c, SIGN_IN_COOKIE);
  if (!expected || !sent || !sameSecret(expected, sent))
    throw forbidden('this form has expired or was not sent from this registry; reload the page and try again');
}
