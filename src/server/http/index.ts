// Connection-level guards, under the hono app: the only module that deals with sockets.
//   createHttpServer(listener, options)  the node:http server: pipelining cap, timeouts (408), parser
//                                        errors (400/431) in our shape, CONNECT, a stop that cuts stalled
//                                        connections
//   guardRefusals                        middleware: answers the requests the guards refused (past the
//                                        pipelining cap: 503; an unknown Expect: 417) through the app
//   closeAfterResponse(incoming, …)      an answer that closes the connection while the body still comes
//   DROP                                 how much of a refused body is read and dropped
import type { HttpBindings } from '@hono/node-server';
import type { Context, MiddlewareHandler } from 'hono';
import { guardRefusal, type GuardRefusal } from './server.js';

export { closeAfterResponse, DROP } from './close-after-response.js';
export { createHttpServer, type HttpServer, type HttpServerOptions } from './server.js';

/** Answers a request the guards refused, so that it is logged and shaped as every other answer. */
export const guardRefusals: MiddlewareHandler = (c, next) => {
  const refusal = guardRefusal((c.env as HttpBindings | undefined)?.incoming);
  return refusal ? refuse(c, refusal) : next();
};

const refuse = async (c: Context, { error, status }: GuardRefusal) => {
  if (status === error.status) throw error; // answered as every error is
  return c.json(error.body(), status as 400, error.headers);
};
