// One HTTP exchange over node:http/https. Not fetch: in Node 20 the first use of fetch (or of the
// global Request, Response or Headers) loads undici, which costs far more CPU than node:http for one
// request and would be most of what a read command costs (docs/decisions.md).
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { REGISTRY_ANSWER_MAX } from '../shared/tuning.js';
import { NetworkError } from './errors.js';

export interface Exchange {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Gives up (NetworkError "no answer in time") when the whole answer has not come by then. */
  timeoutMs?: number;
  /** Gives up when nothing arrives for this long, also while the body streams (a download has no whole-answer timeout). */
  idleMs?: number;
}

export interface Answer {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** The body, unread: read it whole with `text()`, or stream it. */
  body: IncomingMessage;
  text(): Promise<string>;
}

/** A URL fit for messages: without its query (a signature is nobody's business). */
export const withoutQuery = (url: string) => url.replace(/\?.*$/, '');

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

/** Reads an answer whole as UTF-8 text, up to REGISTRY_ANSWER_MAX bytes: past it, it stops reading and rejects. */
export function readText(stream: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= REGISTRY_ANSWER_MAX) return void chunks.push(chunk);
      stream.destroy();
      reject(
        new NetworkError(
          '',
          `its answer is over ${REGISTRY_ANSWER_MAX / 1024 / 1024} MiB, more than a registry sends`,
          false,
        ),
      );
    });
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
}

/** node:http, or node:https for an https URL (loaded only then: it brings TLS, ~2 ms of start-up). */
export const transport = async (target: URL): Promise<typeof http> =>
  (target.protocol === 'https:' ? (await import('node:https')).default : http) as typeof http;

/** Sends one request; resolves at the answer's headers, whatever its status. Network failures reject with NetworkError. */
async function once(exchange: Exchange): Promise<Answer> {
  const target = new URL(exchange.url);
  const lib = await transport(target);
  return new Promise((resolve, reject) => {
    const headers = { ...exchange.headers };
    if (exchange.body !== undefined) headers['content-length'] = String(Buffer.byteLength(exchange.body));
    const request = lib.request(target, { method: exchange.method, headers });
    let timedOut = false;
    const timer = exchange.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          request.destroy();
        }, exchange.timeoutMs)
      : undefined;
    const failure = (error: NodeJS.ErrnoException) =>
      error instanceof NetworkError
        ? error.url
          ? error
          : new NetworkError(exchange.url, error.reason, error.transient)
        : new NetworkError(exchange.url, timedOut ? 'no answer in time' : (error.code ?? error.message));
    let answer: IncomingMessage | undefined;
    if (exchange.idleMs) {
      request.setTimeout(exchange.idleMs, () => {
        const stalled = new NetworkError(exchange.url, `nothing arrived for ${exchange.idleMs! / 1000} s`);
        if (answer) answer.destroy(stalled);
        else request.destroy(stalled);
      });
    }
    request.on('response', (response) => {
      answer = response;
      response.on('close', () => clearTimeout(timer));
      resolve({
        status: response.statusCode ?? 0,
        statusText: response.statusMessage ?? '',
        headers: response.headers,
        body: response,
        text: () => readText(response).catch((error) => Promise.reject(failure(error))),
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(failure(error));
    });
    request.end(exchange.body);
  });
}

/**
 * Sends a request, following redirects of GET and HEAD (as fetch would); a redirect to another
 * origin drops the authorization header, so a token never leaves the origin it was meant for.
 */
export async function send(exchange: Exchange): Promise<Answer> {
  let current = exchange;
  for (let hop = 0; ; hop++) {
    const answer = await once(current);
    const location = answer.headers.location;
    if (!REDIRECTS.has(answer.status) || !location || (current.method !== 'GET' && current.method !== 'HEAD')) {
      return answer;
    }
    if (hop >= MAX_REDIRECTS) throw new NetworkError(exchange.url, `it redirects more than ${MAX_REDIRECTS} times`);
    answer.body.resume(); // drop the redirect's own body
    const next = new URL(location, current.url);
    if (next.protocol !== 'http:' && next.protocol !== 'https:')
      throw new NetworkError(current.url, `it redirects to ${next.protocol} URL, not an http(s) one`);
    const headers = { ...current.headers };
    if (next.origin !== new URL(current.url).origin) delete headers.authorization;
    current = { ...current, url: next.href, headers };
  }
}
