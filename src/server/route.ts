import type { HttpBindings } from '@hono/node-server';
import type { Context, Hono } from 'hono';
import type { z } from 'zod';
import { fieldErrors, malformedJson as malformedJsonMessage } from '../contract/errors.js';
import { MAX_FIELD_ERRORS } from '../contract/limits.js';
import { ANONYMOUS_BODIES_MAX, JSON_BODIES_MAX } from '../shared/tuning.js';
import { contentEncodingProblem, contentTypeProblem, type BodyMedia } from '../contract/media.js';
import type { Operation, ResponseOf } from '../contract/operation.js';
import { badRequest, forbidden, HttpError, tooLarge, unauthorized, unsupportedMediaType } from './errors.js';
import { EXCHANGED_TOKEN_OPERATIONS } from '../contract/trust.js';
import { REPEATED_PARAMS } from '../contract/fields.js';
import { DROP } from './http/index.js';
import { jsonErrorOffset, JsonShape } from './json-shape.js';

/** Who is calling: a user token, or a publisher's personal access token (acting for its creator). */
export type Principal =
  | { kind: 'user'; userId: string; admin: boolean; tokenId: string }
  | { kind: 'pat'; userId: string; admin: false; tokenId: string; publisherId: string }
  /** A token exchanged for a CI job's OIDC token (services/trusts.ts): it publishes, nothing else. */
  | { kind: 'oidc'; userId: string; admin: false; tokenId: string; publisherId: string; nodeId: string | null };

/** Resolves a bearer token to a principal, or null for an unknown or revoked one. */
export type Authenticate = (token: string) => Principal | null | Promise<Principal | null>;

export type AppEnv = {
  Variables: {
    principal: Principal | null;
    /** A bearer token already looked up by a middleware (the rate limit), so the route need not again. */
    authenticated?: { token: string; principal: Principal | null };
    /** The request's id (X-Request-Id), set by the first middleware (access-log.ts). */
    requestId?: string;
  };
};

export interface RouteContext<O extends Operation> {
  c: Context<AppEnv>;
  params: z.output<O['params']>;
  principal: Principal | null;
  /** Validates query and body (400). Call it after the 404/403 checks, as DESIGN.md §2 orders them. */
  input(): { query: z.output<O['query']>; body: z.output<O['body']> };
  /** The JSON body as read, unparsed: for a handler that parses it off the event loop (the AI proxy). */
  rawBody: Buffer;
  /** The bearer token sent, if any (publish compares it with the body's). */
  bearer: string | undefined;
}

/** `/a/{b}/c` → `/a/:b/c`. */
export const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** The token of an `Authorization: Bearer …` header, if it is one. */
export function bearerOf(header: string | undefined): string | undefined {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

export const bearerToken = (c: Context): string | undefined => bearerOf(c.req.header('authorization'));

/**
 * Bytes of the JSON bodies being read or held by their request in one server (JSON_BODIES_MAX), and
 * of those whose caller is not known yet and being read (ANONYMOUS_BODIES_MAX): without them, clients
 * sending slowly, or submissions waiting on a stalled AI provider, could each hold a body for as long as
 * a request may take, up to all the memory there is. Each server owns its own (RouteDeps.bodies).
 */
export interface BodyBudget {
  all: number;
  anonymous: number;
}

export const bodyBudget = (): BodyBudget => ({ all: 0, anonymous: 0 });

/**
 * Reads a JSON body as text, refusing more than `max` bytes even when no Content-Length was sent, and
 * a body over the depth or value budget (JsonShape) as soon as it shows: nothing more of it is kept.
 * Every body counts against JSON_BODIES_MAX while it is read and then, added to `held`, until its
 * request gives it back; an `anonymous` one (its caller not known yet) also against ANONYMOUS_BODIES_MAX
 * while it is read.
 */
function readJsonBody(
  c: Context,
  max: number,
  reading: BodyBudget,
  held: { bytes: number },
  anonymous = false,
): Promise<Buffer> {
  const incoming = (c.env as HttpBindings).incoming;
  if (incoming.readableEnded) return Promise.resolve(EMPTY);
  return new Promise((resolve, reject) => {
    const shape = new JsonShape();
    let chunks: Buffer[] = [];
    // Past 1 MiB, a body with a Content-Length is copied into place piece by piece: joining 25 MiB at the
    // end held the event loop (the AI proxy's bodies). Only past 1 MiB: the room is taken before the
    // bytes come, so each MiB counted against JSON_BODIES_MAX reserves at most 25.
    const length = Number(incoming.headers['content-length']);
    let whole: Buffer | undefined;
    let size = 0;
    let counted = 0;
    const stop = (keep = false) => {
      if (keep) held.bytes += counted;
      else reading.all -= counted;
      if (anonymous) reading.anonymous -= counted;
      counted = 0;
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onCut);
      incoming.off('close', onCut);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      counted += chunk.length;
      reading.all += chunk.length;
      if (anonymous) reading.anonymous += chunk.length;
      const refusal =
        size > max
          ? tooLarge(`the request body is over ${max} bytes`)
          : anonymous && reading.anonymous > ANONYMOUS_BODIES_MAX
            ? anonymousBodiesFull()
            : reading.all > JSON_BODIES_MAX
              ? bodiesFull()
              : shape.feed(chunk);
      if (refusal) {
        stop();
        return reject(refusal);
      }
      if (whole) return void chunk.copy(whole, size - chunk.length);
      chunks.push(chunk);
      if (size > MiB && Number.isSafeInteger(length) && length <= max) {
        whole = Buffer.allocUnsafe(length);
        let at = 0;
        for (const piece of chunks) at += piece.copy(whole, at);
        chunks = [];
      }
    };
    const onEnd = () => {
      stop(true);
      resolve(whole ? whole.subarray(0, size) : Buffer.concat(chunks, size));
    };
    // The client went away, or Node cut a request sent too slowly (it answered 408 itself).
    const onCut = () => {
      stop();
      reject(badRequest('the request body ended before it was whole (the connection closed or timed out)'));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onCut);
    incoming.on('close', onCut);
  });
}

const EMPTY = Buffer.alloc(0);
const MiB = 1024 * 1024;

const bodiesFull = () =>
  new HttpError(
    'unavailable',
    'the registry is reading or holding too many request bodies at the moment; retry shortly',
    undefined,
    undefined,
    { 'Retry-After': '1' },
  );

const anonymousBodiesFull = () =>
  new HttpError(
    'unavailable',
    'too many requests without an Authorization header are sending their bodies at the moment; retry shortly, or send the token in the Authorization header',
    undefined,
    undefined,
    { 'Retry-After': '1' },
  );

/**
 * Reads and drops what is left of a request's body (within DROP) before an error is answered, while it
 * keeps coming. Node closes a connection whose request was not read whole; closing with bytes still
 * arriving resets it, and the client, still sending, would lose the answer.
 */
async function dropBody(c: Context): Promise<void> {
  const incoming = (c.env as HttpBindings | undefined)?.incoming;
  if (!incoming || incoming.readableEnded || incoming.destroyed) return;
  await new Promise<void>((done) => {
    let dropped = 0;
    const finish = () => {
      clearTimeout(timer);
      clearTimeout(idle);
      incoming.off('data', onData);
      incoming.off('end', finish);
      incoming.off('close', finish);
      incoming.off('error', finish);
      done();
    };
    const onData = (chunk: Buffer) => {
      if ((dropped += chunk.length) > DROP.bytes) return finish();
      idle.refresh();
    };
    const timer = setTimeout(finish, DROP.ms);
    const idle = setTimeout(finish, DROP.idleMs);
    incoming.on('data', onData);
    incoming.on('end', finish);
    incoming.on('close', finish);
    incoming.on('error', finish);
    incoming.resume();
  });
}

/** The 415 of a body of `kind` sent with another Content-Type or with a Content-Encoding (src/contract/media.ts), said before the body is read. */
export function mediaRefusal(kind: BodyMedia, c: Context): HttpError | undefined {
  const problem =
    contentTypeProblem(kind, c.req.header('content-type')) ?? contentEncodingProblem(c.req.header('content-encoding'));
  return problem === undefined ? undefined : unsupportedMediaType(problem);
}

/** The 400 of a body JSON.parse refused, naming where it breaks (`jsonErrorOffset`), never what it holds. */
export const malformedJson = (at: number | undefined, length: number) => badRequest(malformedJsonMessage(at, length));

/** The 400 of a request that breaks the contract's rules: each problem (up to MAX_FIELD_ERRORS) with its field. */
export function invalidRequest(issues: readonly Pick<z.core.$ZodIssue, 'path' | 'message'>[]): HttpError {
  const details = fieldErrors(issues as z.core.$ZodIssue[]);
  const more = issues.length > MAX_FIELD_ERRORS ? ` (and ${issues.length - MAX_FIELD_ERRORS} more problems)` : '';
  return badRequest(`invalid request: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}${more}`, details);
}

export interface RouteDeps {
  authenticate: Authenticate;
  /** The bytes of the JSON bodies this server reads or holds (bodyBudget()). */
  bodies: BodyBudget;
}

export interface RouteOptions {
  /**
   * A JSON body field that may carry the credential instead of the Authorization header (publish's
   * `personal_access_token`). A header token is checked first, before the body is read; a body that
   * carries a different one is then 400.
   */
  bodyCredential?: string;
  /** The handler reads no principal: a token sent is not looked up (the liveness check answers while the database does not). */
  ignoreToken?: boolean;
}

/** The string in `field` of a JSON body (read within its bounds), if the body parses and has one. */
function credentialInBody(raw: Buffer, field: string): string | undefined {
  try {
    const value = (JSON.parse(raw.toString('utf8')) as Record<string, unknown> | null)?.[field];
    return typeof value === 'string' && value !== '' ? value : undefined;
  } catch {
    return undefined; // malformed JSON is answered by input()
  }
}

/** A query parameter the operation reads, and whether it may be repeated (REPEATED_PARAMS). */
type QueryKey = [name: string, repeated: boolean];

/** The parameters of an operation's query schema (an object schema: the contract's queries all are). */
function queryKeysOf(operation: Operation): QueryKey[] {
  const shape = (operation.query as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape) throw new Error(`the query schema of ${operation.id} is not an object schema`);
  return Object.keys(shape).map((name) => [name, REPEATED_PARAMS.has(shape[name])]);
}

/**
 * The query string as the operation reads it: every value of a repeated parameter, the first of any
 * other. Only the operation's parameters are read (its schema drops any other), each by name.
 */
function queryOf(c: Context, keys: QueryKey[]): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, repeated] of keys) {
    const value = repeated ? c.req.queries(name) : c.req.query(name);
    if (value !== undefined) query[name] = value;
  }
  return query;
}

/** Validates a request's query and JSON body against the operation (400 naming each field). */
function parseInput<O extends Operation>(
  operation: O,
  queryKeys: QueryKey[],
  c: Context<AppEnv>,
  raw: Buffer,
): ReturnType<RouteContext<O>['input']> {
  const query = operation.query.safeParse(queryOf(c, queryKeys));
  const issues = query.success ? [] : [...query.error.issues];
  let body: unknown;
  if (operation.bodyKind === 'json') {
    let json: unknown;
    try {
      json = raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
    } catch {
      throw malformedJson(jsonErrorOffset(raw), raw.length);
    }
    const parsed = operation.body.safeParse(json);
    if (parsed.success) body = parsed.data;
    else issues.push(...parsed.error.issues);
  }
  if (issues.length) throw invalidRequest(issues);
  return { query: (query as { data: unknown }).data, body } as ReturnType<RouteContext<O>['input']>;
}

/**
 * An exchanged token publishes and nothing else (EXCHANGED_TOKEN_OPERATIONS): other operations that need
 * a token refuse it, and those open to anyone read it as no token at all.
 */
function exchangedTokenUse(operation: Operation, principal: Principal | null): Principal | null {
  if (principal?.kind !== 'oidc') return principal;
  if (EXCHANGED_TOKEN_OPERATIONS.includes(operation.id)) return principal;
  if (operation.auth !== 'user') return null;
  throw forbidden(
    `this token was exchanged for a CI job's OIDC token: it publishes and uploads only, and may not ${operation.summary.charAt(0).toLowerCase()}${operation.summary.slice(1)}`,
    'use a user token or a personal access token for anything but publishing',
  );
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
  const queryKeys = queryKeysOf(operation);
  // An operation without a JSON body holds no body bytes to give back: no frame around its answer.
  if (operation.bodyKind !== 'json') return void app[method](honoPath(operation.path), (c) => answer(c, { bytes: 0 }));
  app[method](honoPath(operation.path), async (c) => {
    // the bytes of the body this request holds, given back when it is answered (or refused)
    const held = { bytes: 0 };
    try {
      return await answer(c, held);
    } catch (error) {
      deps.bodies.all -= held.bytes;
      held.bytes = 0;
      if (operation.bodyKind === 'json') await dropBody(c);
      throw error;
    } finally {
      deps.bodies.all -= held.bytes;
    }
  });

  async function answer(c: Context<AppEnv>, held: { bytes: number }): Promise<Response> {
    let raw: Buffer = EMPTY;
    if (operation.bodyKind === 'json') {
      const length = Number(c.req.header('content-length') ?? 0);
      const hasBody = length > 0 || c.req.header('transfer-encoding') !== undefined;
      const refused = hasBody ? mediaRefusal('json', c) : undefined;
      if (refused) throw refused;
      if (length > operation.bodyMax) throw tooLarge(`the request body is over ${operation.bodyMax} bytes`);
    }
    const readBody = (anonymous = false) =>
      operation.bodyKind === 'json'
        ? readJsonBody(c, operation.bodyMax, deps.bodies, held, anonymous)
        : Promise.resolve(EMPTY);
    const bodyCredential = operation.bodyKind === 'json' ? options.bodyCredential : undefined;
    const bearer = bearerToken(c);
    let credential = bearer;
    let bodyRead = false;
    if (bodyCredential && bearer === undefined) {
      // The credential may be in the body: read it (within the operation's bounds) before authenticating.
      raw = await readBody(true);
      bodyRead = true;
      credential = credentialInBody(raw, bodyCredential);
    }
    // A header token is checked before the body is read: a stranger's body costs nothing.
    const known = c.get('authenticated');
    const found =
      !credential || options.ignoreToken
        ? null
        : known?.token === credential
          ? known.principal
          : await deps.authenticate(credential);
    const principal = exchangedTokenUse(operation, found);
    if (operation.auth === 'user' && !principal) {
      throw unauthorized(credential ? 'the token is unknown or revoked' : undefined);
    }
    c.set('principal', principal);
    if (!bodyRead && operation.bodyKind === 'json') raw = await readBody();
    if (bodyCredential && bearer !== undefined) {
      const fromBody = credentialInBody(raw, bodyCredential);
      if (fromBody !== undefined && fromBody !== bearer) {
        throw badRequest(
          `the Authorization header and the body field ${bodyCredential} carry different tokens; send one`,
        );
      }
    }

    const params = operation.params.safeParse(c.req.param());
    if (!params.success) throw badRequest('invalid path parameters', fieldErrors(params.error.issues));

    const input = () => parseInput(operation, queryKeys, c, raw);

    const result = await handler({
      c,
      params: params.data as z.output<O['params']>,
      principal,
      input,
      rawBody: raw,
      bearer,
    });
    if (result instanceof Response) return result;
    if (operation.status === 204) return c.body(null, 204);
    return c.json(result as object, operation.status as 200);
  }
}
