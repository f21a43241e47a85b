// One HTTP exchange over node:http/https. Not fetch: in Node 20 the first use of fetch (or of the
// global Request, Response or Headers) loads undici, about 100 ms of CPU for one request against a
// few ms for node:http, which is most of what a read command costs (docs/decisions.md).
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { NetworkError } from './errors.js';

export interface Exchange {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Gives up (NetworkError "no answer in time") when the whole answer has not come by then. */
  timeoutMs?: number;
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

/** Reads a stream whole as UTF-8 text. */
export function readText(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (text += chunk));
    stream.on('end', () => resolve(text));
    stream.on('error', reject);
  });
}

/** node:http, or node:https for an https URL (loaded only then: it brings TLS, ~2 ms of start-up). */
export const transport = async (target: URL): Promise<typeof http> => (target.protocol === 'https:' ? (await import('node:https')).default : http) as typeof http;

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
    const failure = (error: NodeJS.ErrnoException) => new NetworkError(exchange.url, timedOut ? 'no answer in time' : (error.code ?? error.message));
    request.on('response', (response) => {
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
    if (!REDIRECTS.has(answer.status) || !location || hop >= MAX_REDIRECTS || (current.method !== 'GET' && current.method !== 'HEAD')) {
      return answer;
    }
    answer.body.resume(); // drop the redirect's own body
    const next = new URL(location, current.url);
    const headers = { ...current.headers };
    if (next.origin !== new URL(current.url).origin) delete headers.authorization;
    current = { ...current, url: next.href, headers };
  }
}
