// A TCP proxy in front of the test PostgreSQL that reads what its clients send (the frontend messages
// of the wire protocol, unencrypted on 127.0.0.1) and counts them: statements executed, round trips
// (a Sync or a simple Query each) and their texts, per connection. The connections of an instance's
// watch of changes (one LISTENs, one sends beats with pg_notify) are told apart, so a test can count
// what the pool of an instance sends.
import { createServer, connect, type Socket } from 'node:net';

interface Connection {
  watches: boolean;
  statements: number;
  roundTrips: number;
  texts: string[];
}

export interface CountingProxy {
  /** The database's URL through the proxy. */
  url: string;
  /** Statements executed (Execute or Query messages) by the connections that do not watch. */
  statements(): number;
  /** Round trips (Sync or Query messages) by the connections that do not watch. */
  roundTrips(): number;
  /** The texts of the statements prepared or sent by the connections that do not watch. */
  texts(): string[];
  /** Connections that watch, open or closed. */
  watchers(): number;
  /** Connections that do not watch, open or closed. */
  connections(): number;
  /** Cuts every connection through the proxy (their clients see them closed). */
  cut(): void;
  close(): Promise<void>;
}

/** What the watch of changes sends: LISTEN, and its beats. */
const WATCH = /^\s*listen\b|\bpg_notify\(/i;
const STARTUP_CODES = new Set([80877103, 80877104, 196608]); // SSL, GSS encryption, protocol 3.0

export async function countingProxy(databaseUrl: string): Promise<CountingProxy> {
  const target = new URL(databaseUrl);
  const connections: Connection[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    const connection: Connection = { watches: false, statements: 0, roundTrips: 0, texts: [] };
    connections.push(connection);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.pipe(client);
    const read = reader(connection);
    client.on('data', (chunk: Buffer) => {
      read(chunk);
      upstream.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const proxied = new URL(databaseUrl);
  proxied.host = `127.0.0.1:${address.port}`;
  const pool = () => connections.filter((c) => !c.watches);
  return {
    url: proxied.toString(),
    statements: () => pool().reduce((sum, c) => sum + c.statements, 0),
    roundTrips: () => pool().reduce((sum, c) => sum + c.roundTrips, 0),
    texts: () => pool().flatMap((c) => c.texts),
    watchers: () => connections.filter((c) => c.watches).length,
    connections: () => pool().length,
    cut() {
      for (const socket of sockets) socket.destroy();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Reads the frontend messages of one connection as they arrive, in chunks that split them anywhere. */
function reader(connection: Connection): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  let started = false;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      if (!started) {
        if (pending.length < 8) return;
        const length = pending.readInt32BE(0);
        if (pending.length < length) return;
        // the startup message (protocol 3.0) is the last one without a type byte
        if (pending.readInt32BE(4) === 196608 || !STARTUP_CODES.has(pending.readInt32BE(4))) started = true;
        pending = pending.subarray(length);
        continue;
      }
      if (pending.length < 5) return;
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) return;
      message(connection, String.fromCharCode(pending[0]), pending.subarray(5, 1 + length));
      pending = pending.subarray(1 + length);
    }
  };
}

function message(connection: Connection, type: string, body: Buffer): void {
  const text = (start: number) => body.toString('utf8', start, body.indexOf(0, start));
  if (type === 'Q') {
    const query = text(0);
    if (WATCH.test(query)) connection.watches = true;
    connection.statements++;
    connection.roundTrips++;
    connection.texts.push(query);
  } else if (type === 'P') {
    const query = text(body.indexOf(0) + 1); // after the statement's name
    if (WATCH.test(query)) connection.watches = true;
    connection.texts.push(query);
  } else if (type === 'E') connection.statements++;
  else if (type === 'S') connection.roundTrips++;
}
