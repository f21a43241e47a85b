// The watch on PostgreSQL connections behind the store's deadline (src/server/store/postgres-deadline.ts):
// closeSilent closes the connections that have heard nothing for the deadline and keeps those that hear,
// also once a connection is upgraded to TLS, as postgres.js upgrades the socket it is given (the socket
// then emits no 'data' of its own). The TLS server here is a stand-in that answers or stays silent.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { watchedSockets } from '../../src/server/store/postgres-deadline.js';

const cert = readFileSync(join(import.meta.dirname, 'tls/tls-cert.pem'));
const key = readFileSync(join(import.meta.dirname, 'tls/tls-key.pem'));
// Each connection says first whether the server should talk to it ('T': a byte every 50 ms) or stay silent.
const server = createServer({ key, cert }, (socket) => {
  socket.on('error', () => {});
  socket.once('data', (first: Buffer) => {
    if (first.toString() !== 'T') return;
    const talk = setInterval(() => socket.write('x'), 50);
    socket.on('close', () => clearInterval(talk));
  });
});
let port: number;
beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

it('closes a TLS connection that heard nothing for the deadline, and keeps one that hears', async () => {
  const watched = watchedSockets();
  const open = async (first: string) => {
    const socket = watched.socket({ host: ['127.0.0.1'], port: [port] });
    const secure: TLSSocket = connect({ socket, ca: cert, host: '127.0.0.1' });
    secure.on('error', () => {});
    await once(secure, 'secureConnect');
    secure.write(first);
    secure.resume();
    return socket;
  };
  const talking = await open('T');
  const silent = await open('S');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  watched.closeSilent(400);
  expect(silent.destroyed, 'silent for 1 s').toBe(true);
  expect(talking.destroyed, 'hears a byte every 50 ms').toBe(false);
  talking.destroy();
});
