// The upstream registry as the mirror reads it (DESIGN.md §13): a registry that speaks the hosted read
// API. Its answers are untrusted input: each is size-bounded, time-bounded and validated against the
// contract before the mirror keeps any of it. Fetches in flight at once are capped.
import { Readable } from 'node:stream';
import * as z from 'zod';
import { Node, NodeList, NodeVersion } from '../../contract/resources.js';
import { HttpError, notFound } from '../errors.js';

/** Why an upstream read failed: the node is not there, upstream is out of reach, or its answer is unusable. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly kind: 'not_found' | 'unreachable' | 'bad_answer',
    message: string,
  ) {
    super(message);
  }
}

export interface UpstreamOptions {
  /** The upstream registry's base URL. */
  url: string;
  /** How long one upstream request may take before its answer starts (and a JSON answer whole), in ms. */
  timeoutMs: number;
  /** How long one archive download may take, whole, in ms. */
  archiveTimeoutMs: number;
  /** Upstream requests in flight at once. */
  concurrency: number;
}

/** An upstream failure as this registry answers it (DESIGN.md §2): 404, 504 out of reach, 502 otherwise. */
export function asHttpError(error: unknown, nodeId: string, upstream: string): unknown {
  if (!(error instanceof UpstreamError)) return error;
  if (error.kind === 'not_found')
    return notFound(`node ${nodeId} is neither in this registry nor at the upstream registry ${upstream}`);
  return new HttpError(error.kind === 'unreachable' ? 'upstream_timeout' : 'upstream_error', error.message);
}

/** The most bytes of a node answer, and of a version list, the mirror reads. */
const NODE_ANSWER_MAX = 2 * 1024 * 1024;
const VERSIONS_ANSWER_MAX = 16 * 1024 * 1024;
/** The most bytes of a page of a node list the mirror reads, and the most nodes of a publisher's list. */
const LIST_ANSWER_MAX = 32 * 1024 * 1024;
const PublisherNodes = z.array(Node).max(100_000);
/** The most versions of one node the mirror keeps. */
export const VERSIONS_MAX = 2000;

/** Waiting room for the capped upstream requests. */
class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly max: number) {}

  async take(signal: AbortSignal): Promise<() => void> {
    while (this.used >= this.max) {
      signal.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const at = this.waiting.indexOf(wake);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(signal.reason);
        };
        this.waiting.push(wake);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
    this.used++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.used--;
      this.waiting.shift()?.();
    };
  }
}

/** Reads a body up to `max` bytes; more is a bad answer. */
async function boundedText(response: Response, max: number, what: string): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max)
    throw new UpstreamError('bad_answer', `${what} is over ${max} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.length;
    if (size > max) throw new UpstreamError('bad_answer', `${what} is over ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

export type UpstreamNode = z.output<typeof Node>;
export type UpstreamVersion = z.output<typeof NodeVersion>;

const VersionList = z.array(NodeVersion).max(VERSIONS_MAX);
const nodePath = (nodeId: string) => `/nodes/${encodeURIComponent(nodeId)}`;

type Request = <T>(url: string, use: (response: Response) => Promise<T>, timeoutMs?: number) => Promise<T>;
type Json = <T>(
  path: string,
  schema: z.ZodType<T>,
  max: number,
  what: string,
  seen?: (response: Response) => void,
) => Promise<T>;

/** One request to upstream, within the cap and the timeout; `use` reads its answer before the slot is given back. */
function requester(base: string, options: UpstreamOptions): Request {
  const slots = new Slots(options.concurrency);
  return async (url, use, timeoutMs = options.timeoutMs) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    let give: (() => void) | undefined;
    try {
      give = await slots.take(deadline);
      const response = await fetch(url, {
        signal: deadline,
        redirect: 'follow',
        headers: { accept: 'application/json' },
      });
      return await use(response);
    } catch (error) {
      if (error instanceof UpstreamError) throw error;
      const why = deadline.aborted ? `no answer within ${timeoutMs} ms` : (error as Error).message;
      throw new UpstreamError('unreachable', `the upstream registry ${base} is out of reach (${why})`);
    } finally {
      give?.();
    }
  };
}

/** Upstream's answer for `what` as the contract's `schema` reads it, or an UpstreamError saying why not. */
function parseAnswer<T>(text: string, schema: z.ZodType<T>, what: string): T {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new UpstreamError('bad_answer', `the upstream answer for ${what} is not JSON`);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UpstreamError(
      'bad_answer',
      `the upstream answer for ${what} breaks the contract (${issue?.path.join('.')}: ${issue?.message})`,
    );
  }
  return parsed.data;
}

function jsonReader(base: string, request: Request): Json {
  return (path, schema, max, what, seen) =>
    request(`${base}${path}`, async (response) => {
      if (response.status === 404) {
        await response.body?.cancel();
        throw new UpstreamError('not_found', `${what} is not at the upstream registry ${base}`);
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        throw new UpstreamError('bad_answer', `the upstream registry ${base} answered ${response.status} for ${what}`);
      }
      seen?.(response);
      return parseAnswer(await boundedText(response, max, `the upstream answer for ${what}`), schema, what);
    });
}

/** A page of upstream's nodes, or of one publisher's (whose pages a Link header chains), and whether one follows. */
async function nodePage(
  json: Json,
  publisher: string | undefined,
  page: number,
  limit: number,
): Promise<{ nodes: UpstreamNode[]; more: boolean }> {
  const paging = `page=${page}&limit=${limit}`;
  if (publisher === undefined) {
    const list = await json(`/nodes?${paging}`, NodeList, LIST_ANSWER_MAX, `page ${page} of the node list`);
    return { nodes: list.nodes, more: page < list.totalPages };
  }
  let more = false;
  const nodes = await json(
    `/publishers/${encodeURIComponent(publisher)}/nodes?${paging}`,
    PublisherNodes,
    LIST_ANSWER_MAX,
    `the nodes of publisher ${publisher}`,
    (response) => {
      more = /rel="?next"?/.test(response.headers.get('link') ?? '');
    },
  );
  return { nodes, more };
}

export function createUpstream(options: UpstreamOptions) {
  const base = options.url.replace(/\/+$/, '');
  const request = requester(base, options);
  const json = jsonReader(base, request);

  return {
    url: base,

    node: (nodeId: string): Promise<UpstreamNode> => json(nodePath(nodeId), Node, NODE_ANSWER_MAX, `node ${nodeId}`),

    versions: (nodeId: string): Promise<UpstreamVersion[]> =>
      json(`${nodePath(nodeId)}/versions`, VersionList, VERSIONS_ANSWER_MAX, `the versions of node ${nodeId}`),

    nodePage: (publisher: string | undefined, page: number, limit: number) => nodePage(json, publisher, page, limit),

    /** The node whose newest Active version defines a node class. */
    classNode: (name: string): Promise<UpstreamNode> =>
      json(`/comfy-nodes/${encodeURIComponent(name)}/node`, Node, NODE_ANSWER_MAX, `the node defining class ${name}`),

    install: (nodeId: string, version: string): Promise<UpstreamVersion> =>
      json(
        `${nodePath(nodeId)}/install?version=${encodeURIComponent(version)}`,
        NodeVersion,
        NODE_ANSWER_MAX,
        `version ${version} of node ${nodeId}`,
      ),

    /**
     * An archive's bytes from `url` (upstream's download URL, often on another host), handed to
     * `receive` as a stream while the slot is held. A status other than 200 is a bad answer.
     */
    archive<T>(url: string, what: string, receive: (body: Readable) => Promise<T>): Promise<T> {
      if (!/^https?:\/\//i.test(url))
        throw new UpstreamError('bad_answer', `the download URL of ${what} is not http(s)`);
      return request(
        url,
        async (response) => {
          if (response.status !== 200 || !response.body) {
            await response.body?.cancel();
            throw new UpstreamError('bad_answer', `the upstream download of ${what} answered ${response.status}`);
          }
          const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
          return receive(body);
        },
        options.archiveTimeoutMs,
      );
    },
  };
}

export type Upstream = ReturnType<typeof createUpstream>;
