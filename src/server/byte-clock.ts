// When a socket last moved a byte, told by its byte counts: a socket upgraded to TLS emits no 'data' of
// its own, but its counts still move. The stalled-connection cuts of the server and of PostgreSQL calls share it.

interface Counted {
  bytesRead: number;
  bytesWritten: number;
}

/** Times since each socket's count (by default read and written) last changed, as seen by the calls to `still`. */
export function byteClock<S extends Counted>(
  count: (socket: S) => number = (socket) => socket.bytesRead + socket.bytesWritten,
) {
  const seen = new Map<S, { bytes: number; at: number }>();
  return {
    /** Notes the count of `socket` now; the ms since it last changed (0 when it just did, is new, or `restart`). */
    still(socket: S, now = performance.now(), restart = false): number {
      const bytes = count(socket);
      const last = seen.get(socket);
      if (restart || last?.bytes !== bytes) {
        seen.set(socket, { bytes, at: now });
        return 0;
      }
      return now - last.at;
    },
    forget: (socket: S) => seen.delete(socket),
    sockets: () => seen.keys(),
    get size() {
      return seen.size;
    },
  };
}
