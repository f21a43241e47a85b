// The forms that change something: each post is checked (origin and CSRF token, session.ts) before
// it does anything, then answered with a redirect to the page that shows the result.
import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ServerContext } from '../context.js';
import { HttpError, tooLarge } from '../errors.js';
import type { AppEnv } from '../route.js';
import { answerPage, sendPage } from './render.js';
import type { Viewer } from './layout.js';
import { SignInPage } from './pages/sign-in.js';
import { checkForm, signIn, signInToken, signOut, viewerOf } from './session.js';

/** A form's fields are a few short lines. */
const FORM_MAX_BYTES = 16 * 1024;

export type FormFields = Record<string, string>;
type FormAction = (c: Context<AppEnv>, viewer: Viewer | null, fields: FormFields) => Promise<Response>;

async function fieldsOf(c: Context): Promise<FormFields> {
  const body = await c.req.parseBody();
  const fields: FormFields = {};
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') fields[name] = value;
  return fields;
}

/** Registers a form's POST: size limit, the origin and CSRF checks, then `action`; a refusal as a page. */
export function form(app: Hono<AppEnv>, ctx: ServerContext, path: string, action: FormAction) {
  const limit = bodyLimit({
    maxSize: FORM_MAX_BYTES,
    onError: () => {
      throw tooLarge(`a form is at most ${FORM_MAX_BYTES} bytes`);
    },
  });
  app.post(path, limit, async (c) => {
    const viewer = await viewerOf(ctx, c);
    return answerPage(c, viewer, async () => {
      const fields = await fieldsOf(c);
      checkForm(ctx, c, viewer, fields.csrf);
      return action(c, viewer, fields);
    });
  });
}

export const redirect = (c: Context, to: string) => c.redirect(to, 303);

export function registerSessionForms(app: Hono<AppEnv>, ctx: ServerContext) {
  form(app, ctx, '/web/sign-in', async (c, viewer, fields) => {
    try {
      await signIn(ctx, c, fields.token?.trim() ?? '');
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      const page = <SignInPage viewer={viewer} csrf={viewer?.csrf ?? signInToken(ctx, c)} problem={error.message} />;
      return sendPage(c, page, error.status);
    }
    return redirect(c, '/');
  });
  form(app, ctx, '/web/sign-out', async (c) => {
    await signOut(ctx, c);
    return redirect(c, '/');
  });
}

export async function signInPage(ctx: ServerContext, c: Context<AppEnv>, viewer: Viewer | null) {
  return <SignInPage viewer={viewer} csrf={viewer?.csrf ?? signInToken(ctx, c)} />;
}
