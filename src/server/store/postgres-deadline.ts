// A deadline on every call to PostgreSQL. postgres.js has no query timeout, and a server that is
// stopped (SIGSTOP, a frozen VM) or cut off without a reset leaves its connections open and silent:
// without a deadline a request waits until TCP gives up, minutes later. A server-side
// statement_timeout cannot help, since the server is not running.
import { connect, type Socket } from 'node:net';
import { byteClock } from '../byte-clock.js';

/** How long one store call may wait for PostgreSQL before the request is answered 503 (docs/decisions.md). */
export const DATABASE_DEADLINE_MS = 5_000;

/** How often the byte counts of the watched sockets are read (a TLS socket's reads are seen this late at most). */
const HEARD_SAMPLE_MS = 250;

/** The error of a call past the deadline: ETIMEDOUT, which the server answers with 503 `unavailable`. */
const overdue = (ms: number) =>
  Object.assign(new Error(`PostgreSQL did not answer within ${ms / 1000} s`), { code: 'ETIMEDOUT' });

/**
 * The postgres.js `socket` option that keeps the connections it opens (as postgres.js would open them:
 * the URL's unix socket path, else its hosts in turn), and `closeSilent`, which closes those that have
 * heard nothing from the server for `ms`: their queries fail (503), the pool opens fresh connections,
 * and a server that comes back is used again without a restart.
 */
export function watchedSockets() {
  // When each socket last read a byte. A socket that postgres.js has upgraded to TLS emits no 'data' of
  // its own, but its byte count still moves: a sample every HEARD_SAMPLE_MS notices that.
  const heard = byteClock<Socket>((socket) => socket.bytesRead);
  const sample = (now = performance.now()) => {
    for (const socket of heard.sockets()) heard.still(socket, now);
  };
  let sampler: NodeJS.Timeout | undefined;
  let turn = 0;
  const watched = {
    /** The error of the last connection `untilStalled` closed (postgres.js fails its query as CONNECTION_CLOSED). */
    overdue: undefined as Error | undefined,
    socket(options: { host: string[]; port: number[]; path?: string | false }): Socket {
      const index = turn++ % options.host.length;
      const socket = options.path ? connect(options.path) : connect(options.port[index], options.host[index]);
      // postgres.js reads these for TLS (the server name), as on the sockets it opens itself.
      Object.assign(socket, { host: options.host[index], port: options.port[index] });
      heard.still(socket);
      socket.on('data', () => heard.still(socket));
      socket.on('close', () => {
        heard.forget(socket);
        if (heard.size) return;
        clearInterval(sampler);
        sampler = undefined;
      });
      sampler ??= setInterval(sample, HEARD_SAMPLE_MS).unref();
      return socket;
    },
    closeSilent(ms: number) {
      const now = performance.now();
      sample(now);
      // less a sample's time: a TLS socket's last read may have been seen that much late
      for (const socket of heard.sockets())
        if (heard.still(socket, now) >= ms - HEARD_SAMPLE_MS) socket.destroy(overdue(ms));
    },
    /**
     * `work`, statements sent one after another (restore's), with a connection that moves no byte
     * either way for `ms` while it runs closed: its statement fails, and `work` with ETIMEDOUT. Idle
     * connections between two works are left alone. Counted in bytes: a socket postgres.js has
     * upgraded to TLS emits no 'data' of its own, but its counts still move.
     */
    async untilStalled<T>(work: Promise<T>, ms: number): Promise<T> {
      const moved = byteClock<Socket>();
      let stalled: Error | undefined;
      const timer = setInterval(
        () => {
          const now = performance.now();
          for (const socket of heard.sockets())
            if (moved.still(socket, now) >= ms) socket.destroy((stalled = watched.overdue = overdue(ms)));
        },
        Math.min(1_000, ms / 10),
      );
      try {
        return await work;
      } catch (error) {
        throw stalled ?? error;
      } finally {
        clearInterval(timer);
      }
    },
  };
  return watched;
}

/**
 * `target` with each method's promise bounded by `ms`: past it the call rejects with ETIMEDOUT and
 * `expired` runs (it closes the silent connections). The call itself is not stopped; its connection is.
 */
export function withDeadline<T extends object>(target: T, ms: number, expired: () => void): T {
  const bounded = (method: (...args: unknown[]) => unknown) =>
    function (this: unknown, ...args: unknown[]) {
      const result = method.apply(this, args);
      if (!(result instanceof Promise)) return result;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          expired();
          reject(overdue(ms));
        }, ms);
      });
      return Promise.race([result, deadline]).finally(() => clearTimeout(timer));
    };
  return Object.fromEntries(
    Object.entries(target).map(([key, value]) => [key, typeof value === 'function' ? bounded(value) : value]),
  ) as T;
}
