// An upload refused before its body is read, pipelined behind a request whose answer is still being
// written on the same connection: the client reads the first answer whole, then the refusal.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../../helpers.js';
import { createPublisher, createUser, makeZip, publishAndUpload, type TestUser } from '../fixtures.js';

const MiB = 1024 * 1024;
let server: TestServer;
let archivePath: string;
let archiveSize: number;
let alice: TestUser;

// A large archive: its answer takes a while to write while the client reads slowly.
beforeAll(async () => {
  server = await startServer();
  alice = await createUser(server, 'alice');
  await createPublisher(server, alice, 'alice-co');
  const zip = await makeZip({ 'data.bin': randomBytes(16 * MiB) });
  archiveSize = zip.length;
  const uploaded = await publishAndUpload(server, alice.token, 'alice-co', 'huge', '1.0.0', {}, zip);
  archivePath = new URL(uploaded.downloadUrl).pathname;
});
afterAll(() => server.close());

/** The answers in `bytes`, read as HTTP/1.1 with Content-Length bodies, in order; what is left over. */
function answers(bytes: Buffer): { status: number; headers: string; body: Buffer }[] {
  const found = [];
  let at = 0;
  while (at < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', at);
    if (end < 0) throw new Error(`an incomplete head at byte ${at}: ${bytes.subarray(at, at + 80).toString('latin1')}`);
    const headers = bytes.subarray(at, end).toString('latin1');
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(headers);
    if (!status) throw new Error(`no status line at byte ${at}: ${headers.slice(0, 80)}`);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(headers)?.[1]);
    if (!Number.isInteger(length)) throw new Error(`no Content-Length in ${headers}`);
    const body = bytes.subarray(end + 4, end + 4 + length);
    if (body.length < length) throw new Error(`a body cut short: ${body.length} of ${length} bytes`);
    found.push({ status: Number(status[1]), headers, body });
    at = end + 4 + length;
  }
  return found;
}

describe('an early refusal pipelined behind an answer still being written', () => {
  it.each([
    { why: 'a bad signature', type: 'application/zip', status: 403 },
    { why: 'a wrong Content-Type', type: 'text/plain', status: 415 },
  ])(
    '$why: the archive comes whole, then the $status, then the close',
    async ({ type, status }) => {
      const port = Number(new URL(server.url).port);
      const upload = `/uploads/00000000-0000-0000-0000-000000000000?expires=${Math.floor(Date.now() / 1000) + 600}&signature=${'0'.repeat(64)}`;
      const received = await new Promise<Buffer>((resolve, reject) => {
        const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
        const chunks: Buffer[] = [];
        socket.pause(); // read nothing yet: the archive's answer stays unfinished while the PUT arrives
        socket.on('data', (chunk) => chunks.push(chunk));
        socket.on('end', () => resolve(Buffer.concat(chunks)));
        socket.on('error', (error) => (chunks.length ? resolve(Buffer.concat(chunks)) : reject(error)));
        socket.write(`GET ${archivePath} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
        socket.write(
          `PUT ${upload} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${4 * MiB}\r\n\r\n`,
        );
        socket.write(Buffer.alloc(64 * 1024, 7));
        setTimeout(() => socket.resume(), 500);
      });
      const [first, second, ...rest] = answers(received);
      expect(first.status).toBe(200);
      expect(first.body.length).toBe(archiveSize);
      expect(second?.status).toBe(status);
      expect(second.headers).toMatch(/\r\nconnection: close/i);
      expect(rest).toEqual([]);
    },
    30_000,
  );

  it('bytes that are no request, pipelined behind answers not written yet: those answers come whole, then the 400', async () => {
    await publishAndUpload(server, alice.token, 'alice-co', 'rated', '1.0.0');
    const reader = await createUser(server, 'reader');
    const review = `POST /nodes/rated/reviews?star=4 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${reader.token}\r\n\r\n`;
    const read = `GET /nodes/rated HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    const received = await new Promise<Buffer>((resolve, reject) => {
      const socket = connect({ port: Number(new URL(server.url).port), host: '127.0.0.1', allowHalfOpen: true });
      const chunks: Buffer[] = [];
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('end', () => resolve(Buffer.concat(chunks)));
      socket.on('error', (error) => (chunks.length ? resolve(Buffer.concat(chunks)) : reject(error)));
      socket.write(`${review}${read}${review}\x01 nonsense\r\n\r\n`);
    });
    expect(answers(received).map((answer) => answer.status)).toEqual([200, 200, 200, 400]);
  });

  it('the server still answers afterwards', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
