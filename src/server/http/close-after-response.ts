// An answer that closes the connection while the client is still sending its body (an upload refused
// before its body is read). Closing a socket with bytes still arriving resets the connection, and a
// client still writing loses the answer (RFC 9112 §9.6): so the answer is written at once, and the
// response ends only once the rest of the body has been read and dropped, within DROP; past DROP the
// connection is cut.
import type { IncomingMessage } from 'node:http';
import { markClosing, responsesBefore, written } from './connections.js';

/** How much of a refused body is read and dropped, at most, and for how long. */
export const DROP = { ms: 2000, bytes: 64 * 1024 * 1024, idleMs: 100 };

/**
 * Reads and drops the rest of the body, once the answers before this request's on its connection are
 * written (until then nothing of it is read); resolves when the body has ended, or cuts the
 * connection past DROP.
 */
function dropRest(incoming: IncomingMessage): Promise<void> {
  const socket = incoming.socket;
  return Promise.all(responsesBefore(incoming).map(written)).then(
    () =>
      new Promise<void>((done) => {
        if (incoming.readableEnded || socket.destroyed) return done();
        const start = socket.bytesRead;
        const cut = () => {
          socket.destroy();
          done();
        };
        const timer = setTimeout(cut, DROP.ms);
        const finish = () => {
          clearTimeout(timer);
          done();
        };
        // Checked on every piece as it arrives: a fast sender on loopback pushes a lot between two polls.
        incoming.on('data', () => socket.bytesRead - start > DROP.bytes && cut());
        incoming.once('end', finish);
        incoming.once('close', finish);
        incoming.resume();
      }),
  );
}

/**
 * The answer as a Response whose body is written at once and which ends once the request's body has
 * been dropped; the connection closes after it.
 */
export function closeAfterResponse(
  incoming: IncomingMessage,
  status: number,
  headers: Record<string, string>,
  body: string,
): Response {
  markClosing(incoming.socket);
  const bytes = Buffer.from(body);
  let sent = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!sent) {
          sent = true;
          return controller.enqueue(bytes);
        }
        await dropRest(incoming);
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(stream, {
    status,
    headers: {
      ...headers,
      'content-type': 'application/json',
      'content-length': String(bytes.length),
      connection: 'close',
    },
  });
}
