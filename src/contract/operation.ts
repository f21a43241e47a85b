import * as z from 'zod';
import { METADATA_BODY_MAX } from './limits.js';
import { pathParams } from './paths.js';

export { buildPath, pathParams } from './paths.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
/** `user`: a user token or a publisher's PAT; `none`: anyone; `signature`: a signed URL. */
export type Auth = 'user' | 'none' | 'signature';

/** One operation of the wire interface, as data: both the client and the server are derived from it. */
export interface Operation<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  id: string;
  method: Method;
  /** Path with `{name}` placeholders, exactly as the interface writes it. */
  path: string;
  summary: string;
  /** Part of the published interface (true) or an addition of ours (false). */
  spec: boolean;
  auth: Auth;
  params: P;
  query: Q;
  /** Headers the operation reads beyond the media type and the credential, by name; documented as header parameters. */
  headers: z.ZodObject;
  body: B;
  /** `json` bodies are validated with `body`; `zip` is a raw archive; `none` sends nothing. */
  bodyKind: 'json' | 'zip' | 'none';
  /** The largest JSON body accepted, in bytes (413 above): METADATA_BODY_MAX unless the operation says. */
  bodyMax: number;
  status: number;
  response: R;
  responseKind: 'json' | 'zip' | 'text' | 'none';
  /** Headers of a successful answer the client reads, by name; documented in the answer. */
  responseHeaders: z.ZodObject;
  /**
   * A POST the server makes safe to send again (publishing renews a pending version): the client then
   * repeats it on a 429 or 503 with Retry-After, a refused or reset connection, or a proxy's 502 or 504, as it
   * does the idempotent methods. Other POSTs never,
   * since a 503 may come after work was done (an AI proxy call made, its task not stored).
   */
  repeatable: boolean;
}

const empty = z.object({});

/** `'/a/{b}/c/{d}'` → `'b' | 'd'`: path parameters typed from the path itself. */
type PathParamNames<Path extends string> = Path extends `${string}{${infer Name}}${infer Rest}`
  ? Name | PathParamNames<Rest>
  : never;
type PathParamsSchema<Path extends string> = z.ZodObject<{ [K in PathParamNames<Path>]: z.ZodString }>;

export function op<
  Path extends string,
  P extends z.ZodType = PathParamsSchema<Path>,
  Q extends z.ZodType = typeof empty,
  B extends z.ZodType = z.ZodUndefined,
  R extends z.ZodType = z.ZodUnknown,
>(def: {
  id: string;
  method: Method;
  path: Path;
  summary: string;
  spec?: boolean;
  auth: Auth;
  params?: P;
  query?: Q;
  headers?: z.ZodObject;
  body?: B;
  bodyKind?: 'json' | 'zip' | 'none';
  bodyMax?: number;
  status?: number;
  response?: R;
  responseKind?: 'json' | 'zip' | 'text' | 'none';
  responseHeaders?: z.ZodObject;
  repeatable?: boolean;
}): Operation<P, Q, B, R> {
  const params = def.params ?? z.object(Object.fromEntries(pathParams(def.path).map((n) => [n, z.string().min(1)])));
  return {
    spec: false,
    status: 200,
    bodyKind: def.body ? 'json' : 'none',
    bodyMax: METADATA_BODY_MAX,
    responseKind: def.response ? 'json' : 'none',
    repeatable: false,
    ...def,
    params: params as unknown as P,
    query: (def.query ?? empty) as Q,
    headers: def.headers ?? empty,
    responseHeaders: def.responseHeaders ?? empty,
    body: (def.body ?? z.undefined()) as B,
    response: (def.response ?? z.unknown()) as R,
  };
}

export type ParamsOf<O> = O extends Operation<infer P, any, any, any> ? z.input<P> : never;
export type QueryOf<O> = O extends Operation<any, infer Q, any, any> ? z.input<Q> : never;
export type BodyOf<O> = O extends Operation<any, any, infer B, any> ? z.input<B> : never;
export type ResponseOf<O> = O extends Operation<any, any, any, infer R> ? z.output<R> : never;
