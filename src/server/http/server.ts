// The node:http server under the app, with the guards that act on connections rather than requests:
// pipelined requests served one at a time with a cap, Node's parser errors and timeouts answered in
// our shape without cutting into an answer under way, and a stop that cuts stalled connections.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { PIPELINED_MAX } from '../../shared/tuning.js';
import { noRoute, tooManyPipelined } from '../../contract/errors.js';
import { byteClock } from '../byte-clock.js';
import { HttpError, rawErrorResponse } from '../errors.js';
import { DROP } from './close-after-response.js';
import { isClosing, markClosing, noteResponse, unfinishedResponses, written } from './connections.js';

// Node keeps a client's half-close from ending the answers still to come only with this field of its
// http.Server, which has no constructor option (it stays false otherwise): a client may close its side
// once it has sent its request (shutdown(SHUT_WR), HTTP/1.0 clients) and still gets its answer.
declare module 'node:http' {
  interface Server {
    httpAllowHalfOpen: boolean;
  }
}

export interface HttpServerOptions {
  /** How long a whole request may take to arrive, in ms; then 408. */
  requestTimeout: number;
  /** How long a request's headers may take to arrive, in ms; then 408. */
  headersTimeout: number;
  /** How long close() waits for requests in flight before it cuts every connection left, in ms. */
  closeTimeout: number;
  /** While closing, a connection that moves no byte this long (ms) is cut. */
  closeStalled: number;
  /** Server events (a connection not accepted, cut while closing). */
  log?: (line: string) => void;
  /** One line for each request refused before it was read (Node's parser errors and timeouts). */
  logRefusal?: (line: string) => void;
}

export interface HttpServer {
  /** Resolves to the address it listens on. */
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Stops accepting, lets requests in flight finish (cutting stalled ones, and all past closeTimeout). */
  close(): Promise<void>;
}

/** Requests the guards refused but hand to the app, so that it answers and logs them like any other. */
const refused = new WeakMap<IncomingMessage, GuardRefusal>();

/** A request refused by the guards: the error, and its status when it is not the error code's own (417). */
export interface GuardRefusal {
  error: HttpError;
  status: number;
}

/** The refusal the guards gave this request (past the pipelining cap, an Expect we do not know), if any. */
export const guardRefusal = (incoming: IncomingMessage | undefined): GuardRefusal | undefined =>
  incoming && refused.get(incoming);

const pipelined = tooManyPipelined(PIPELINED_MAX);
const pipelinedPastMost = {
  error: new HttpError(pipelined.code, pipelined.message, undefined, undefined, {
    'Retry-After': String(pipelined.retryAfter),
    Connection: 'close',
  }),
  status: 503,
};
// The status RFC 9110 gives an Expect the server does not meet, in our shape.
const unsupportedExpect = {
  error: new HttpError(
    'invalid_request',
    'unsupported Expect header: only "100-continue" is understood',
    undefined,
    undefined,
    { Connection: 'close' },
  ),
  status: 417,
};

/** Wraps the app's listener: a connection's requests go to it one at a time, in order, PIPELINED_MAX waiting at most. */
function oneAtATime(listener: (req: IncomingMessage, res: ServerResponse) => void) {
  /** Connections refused for pipelining: closed after that answer, so what follows it is never sent. */
  const overCap = new WeakSet<Duplex>();
  return (req: IncomingMessage, res: ServerResponse) => {
    if (overCap.has(req.socket)) return void res.end(); // ended at once: Node holds it until the connection closes
    const before = noteResponse(res);
    // Node hands over every request of a chunk at once, and each answer would be held whole behind
    // the one before it, for a client that reads none.
    if (before.length >= PIPELINED_MAX) {
      overCap.add(req.socket);
      refused.set(req, pipelinedPastMost);
    }
    const previous = before.at(-1);
    if (previous && !refused.has(req))
      return void written(previous).then(() => void (req.socket.destroyed || listener(req, res)));
    listener(req, res);
  };
}

/** The answer to bytes Node's parser refused (or a request too slow to arrive), as status, code and message. */
function parserRefusal(error: NodeJS.ErrnoException) {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return [408, 'request_timeout', 'the request was sent too slowly'] as const;
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return [431, 'payload_too_large', 'the request headers are too large'] as const;
  return [400, 'invalid_request', 'malformed HTTP request'] as const;
}

/** Errors of Node's HTTP parser never reach the app: answered in our shape, unless an answer is under way there. */
function onClientError(options: HttpServerOptions) {
  return (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (isClosing(socket)) return; // the parser's error again, on bytes that arrive after the answer
    const begun = unfinishedResponses(socket);
    if (!socket.writable || begun.some((res) => res.headersSent && res.socket)) return socket.destroy();
    markClosing(socket);
    // The answers to the whole requests before the bad bytes go out first: the client would read the
    // error as the answer to its first request.
    const pending = begun.filter((res) => res.req.complete);
    void Promise.all(pending.map(written)).then(() => {
      if (!socket.writable) return socket.destroy();
      const [status, code, message] = parserRefusal(error);
      socket.end(rawErrorResponse(status, code, message));
      options.logRefusal?.(`${message} (${error.code}): answered ${status}`);
      // The client may still be sending: read and drop for as long as a refused body is (DROP).
      socket.resume();
      setTimeout(() => socket.destroy(), DROP.ms).unref();
    });
  };
}

/** Builds the server; requests go to `listener` (the app), one at a time per connection. */
export function createHttpServer(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  options: HttpServerOptions,
): HttpServer {
  const { requestTimeout } = options;
  const headersTimeout = Math.min(options.headersTimeout, requestTimeout);
  const serve = oneAtATime(listener);
  // Node checks the timeouts every connectionsCheckingInterval. A request without a Host header reaches
  // the app, which refuses it in our shape (Node's own refusal is an empty 400).
  const server = createServer(
    {
      requestTimeout,
      headersTimeout,
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, headersTimeout / 4)),
      requireHostHeader: false,
    },
    serve,
  );
  server.httpAllowHalfOpen = true;
  // An Expect other than 100-continue: Node would answer an empty 417 itself.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    refused.set(req, unsupportedExpect);
    serve(req, res);
  });
  // Accepting fails when descriptors run out (EMFILE): that connection is dropped, the server goes on.
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (server.listening) options.log?.(`cannot accept a connection: ${error.code ?? error.message}`);
  });
  server.on('clientError', onClientError(options));
  // Node closes a CONNECT request's connection without a word unless someone listens: no route here.
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => {});
    socket.end(rawErrorResponse(404, 'not_found', noRoute('CONNECT', request.url ?? '').slice(0, 300)));
  });
  const connections = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  return {
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve(server.address() as AddressInfo));
      }),
    close: () => stop(server, connections, options),
  };
}

/**
 * While closing: a connection that has moved no byte for `closeStalled` ms while its request is still
 * coming in, or while its answer waits for the client to read it, is cut. A stalled upload would hold
 * the stop for up to the request timeout; one making progress finishes.
 */
function cutStalled(connections: Set<Socket>, options: HttpServerOptions) {
  const moved = byteClock<Socket>();
  return setInterval(() => {
    const now = performance.now();
    for (const socket of connections) {
      // No response begun: its request line or headers are still coming in (idle ones are closed by the sweep).
      const begun = unfinishedResponses(socket);
      const waiting = socket.writableLength > 0 || begun.length === 0 || begun.some((res) => !res.req.complete);
      if (moved.still(socket, now, !waiting) >= options.closeStalled) {
        options.log?.(
          `closing: cut a connection that moved nothing for ${options.closeStalled / 1000} s (a stalled request, upload or download)`,
        );
        socket.destroy();
      }
    }
  }, 250);
}

function stop(
  server: ReturnType<typeof createServer>,
  connections: Set<Socket>,
  options: HttpServerOptions,
): Promise<void> {
  return new Promise((resolve) => {
    // A keep-alive connection busy when closing begins turns idle once its response is sent: closed then.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const stalled = cutStalled(connections, options);
    const deadline = setTimeout(() => {
      options.log?.(
        `closing: cut ${connections.size} connection(s) still open ${options.closeTimeout / 1000} s after the stop began`,
      );
      for (const socket of connections) socket.destroy();
    }, options.closeTimeout);
    server.close(() => {
      clearInterval(sweep);
      clearInterval(stalled);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}
