import type { Context, Hono } from 'hono';
import type { z } from 'zod';
import { fieldErrors } from '../contract/errors.js';
import { JSON_BODY_MAX, JSON_MAX_DEPTH } from '../contract/limits.js';
import type { Operation, ResponseOf } from '../contract/operation.js';
import { badRequest, tooLarge, unauthorized, unsupportedMediaType } from './errors.js';

/** Who is calling: a user token, or a publisher's personal access token (acting for its creator). */
export type Principal =
  | { kind: 'user'; userId: string; admin: boolean; tokenId: string }
  | { kind: 'pat'; userId: string; admin: false; tokenId: string; publisherId: string };

/** Resolves a bearer token to a principal, or null for an unknown or revoked one. */
export type Authenticate = (token: string) => Principal | null | Promise<Principal | null>;

export type AppEnv = {
  Variables: {
    principal: Principal | null;
    /** A bearer token already looked up by a middleware (the rate limit), so the route need not again. */
    authenticated?: { token: string; principal: Principal | null };
  };
};

export interface RouteContext<O extends Operation> {
  c: Context<AppEnv>;
  params: z.output<O['params']>;
  principal: Principal | null;
  /** Validates query and body (400). Call it after the 404/403 checks, as DESIGN.md §2 orders them. */
  input(): { query: z.output<O['query']>; body: z.output<O['body']> };
  /** The bearer token sent, if any (publish compares it with the body's). */
  bearer: string | undefined;
}

/** `/a/{b}/c` → `/a/:b/c`. */
export const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

export function bearerToken(c: Context): string | undefined {
  const header = c.req.header('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/** Reads the body as text, refusing more than `max` bytes even when no Content-Length was sent. */
async function readLimited(c: Context, max: number): Promise<string> {
  const stream = c.req.raw.body;
  if (!stream) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      // The client went away, or Node cut a request sent too slowly (it answered 408 itself).
      throw badRequest('the request body ended before it was whole (the connection closed or timed out)');
    }
    const { done, value } = chunk;
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw tooLarge(`the request body is over ${max} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** How deep arrays and objects nest in JSON text (brackets inside strings do not count). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

export interface RouteDeps {
  authenticate: Authenticate;
}

export interface RouteOptions {
  /**
   * A JSON body field that may carry the credential instead of the Authorization header (publish's
   * `personal_access_token`). When both are sent and differ, 400, before either is looked up.
   */
  bodyCredential?: string;
}

/** The string in `field` of a JSON body, if the body parses and has one. */
function credentialInBody(raw: string, field: string): string | undefined {
  try {
    const value = (JSON.parse(raw) as Record<string, unknown> | null)?.[field];
    return typeof value === 'string' && value !== '' ? value : undefined;
  } catch {
    return undefined; // malformed JSON is answered by input()
  }
}

/**
 * Serves one operation of the contract. Checks in the order of DESIGN.md §2: 415 and 413 before the
 * body is read, then 401; the handler does its 404 and 403, then calls `input()` for the 400s.
 */
export function route<O extends Operation>(
  app: Hono<AppEnv>,
  deps: RouteDeps,
  operation: O,
  handler: (rc: RouteContext<O>) => Promise<ResponseOf<O> | Response> | ResponseOf<O> | Response,
  options: RouteOptions = {},
): void {
  const method = operation.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
  app[method](honoPath(operation.path), async (c) => {
    let raw = '';
    if (operation.bodyKind === 'json') {
      const length = Number(c.req.header('content-length') ?? 0);
      const hasBody = length > 0 || c.req.header('transfer-encoding') !== undefined;
      const type = c.req.header('content-type') ?? '';
      if (hasBody && !/^application\/([\w.+-]+\+)?json\b/i.test(type.trim())) {
        throw unsupportedMediaType(`send the body as JSON with Content-Type: application/json (got "${type || 'none'}")`);
      }
      if (length > JSON_BODY_MAX) throw tooLarge(`the request body is over ${JSON_BODY_MAX} bytes`);
    }
    const bearer = bearerToken(c);
    let credential = bearer;
    if (options.bodyCredential && operation.bodyKind === 'json') {
      // The credential may be in the body: read it before authenticating (otherwise after).
      raw = await readLimited(c, JSON_BODY_MAX);
      const fromBody = credentialInBody(raw, options.bodyCredential);
      if (fromBody !== undefined && bearer !== undefined && fromBody !== bearer) {
        throw badRequest(`the Authorization header and the body field ${options.bodyCredential} carry different tokens; send one`);
      }
      credential ??= fromBody;
    }
    const known = c.get('authenticated');
    const principal = !credential ? null : known?.token === credential ? known.principal : await deps.authenticate(credential);
    if (operation.auth === 'user' && !principal) {
      throw unauthorized(credential ? 'the token is unknown or revoked' : undefined);
    }
    c.set('principal', principal);
    if (operation.bodyKind === 'json' && !options.bodyCredential) raw = await readLimited(c, JSON_BODY_MAX);

    const params = operation.params.safeParse(c.req.param());
    if (!params.success) throw badRequest('invalid path parameters', fieldErrors(params.error.issues));

    const input = () => {
      const query = operation.query.safeParse(c.req.query());
      const details = query.success ? [] : fieldErrors(query.error.issues);
      let body: unknown;
      if (operation.bodyKind === 'json') {
        let json: unknown;
        // Deeper nesting would overflow the stack wherever the value is walked (JSON.stringify, zod).
        if (jsonDepth(raw) > JSON_MAX_DEPTH) throw badRequest(`the JSON body nests deeper than ${JSON_MAX_DEPTH} levels`);
        try {
          json = raw === '' ? undefined : JSON.parse(raw);
        } catch (error) {
          throw badRequest(`malformed JSON: ${error instanceof Error ? error.message : 'unreadable'}`);
        }
        const parsed = operation.body.safeParse(json);
        if (parsed.success) body = parsed.data;
        else details.push(...fieldErrors(parsed.error.issues));
      }
      if (details.length) throw badRequest(`invalid request: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, details);
      return { query: (query as { data: unknown }).data, body } as ReturnType<RouteContext<O>['input']>;
    };

    const result = await handler({ c, params: params.data as z.output<O['params']>, principal, input, bearer });
    if (result instanceof Response) return result;
    if (operation.status === 204) return c.body(null, 204);
    return c.json(result as object, operation.status as 200);
  });
}
