// The connection-level guards (src/server/http/): the pipelining cap answers through the app (so the
// access log has its line), and a parser error never cuts into an answer under way.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PIPELINED_MAX } from '../../../src/shared/tuning.js';
import { startServer, type TestServer } from '../../helpers.js';
import { createPublisher, createUser, makeZip, publish, uploadTo, type TestUser } from '../fixtures.js';

let server: TestServer;
let alice: TestUser;
const logged: string[] = [];

beforeAll(async () => {
  server = await startServer({ accessLog: (line) => logged.push(line) });
  alice = await createUser(server, 'alice');
  await createPublisher(server, alice, 'alice-co');
});
afterAll(() => server.close());

describe('the pipelining cap', () => {
  it('answers past the cap 503 and writes an access-log line for it, as for every answer', async () => {
    logged.length = 0;
    const answer = await new Promise<string>((done) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('close', () => done(text));
      socket.on('error', () => {});
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(PIPELINED_MAX + 1));
    });
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    expect(statuses).toEqual([...Array(PIPELINED_MAX).fill(200), 503]);
    const lines = logged.map((line) => line.replace(/ [\d.]+ms .*$/, ''));
    expect(lines.filter((line) => line === 'GET /healthz 200')).toHaveLength(PIPELINED_MAX);
    expect(lines).toContain('GET /healthz 503');
  });
});

describe('a parser error', () => {
  it('closes a connection whose answer has begun instead of writing its error into it', async () => {
    const published = await publish(server, alice.token, 'alice-co', 'big', '1.0.0');
    expect(published.status, published.text).toBe(201);
    const zip = await makeZip({ 'weights.bin': randomBytes(8 * 1024 * 1024) });
    expect((await uploadTo(published.body.signedUrl, zip)).status).toBe(200);
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.on('error', () => {});
    socket.write('GET /archives/alice-co/big/1.0.0/node.zip HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    // Once the download's headers are here, stop reading (the answer stays under way), then send garbage.
    await new Promise<void>((resolve) =>
      socket.once('data', (chunk: Buffer) => (chunks.push(chunk), socket.pause(), resolve())),
    );
    socket.write('NOT HTTP AT ALL\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.resume();
    await closed;
    const received = Buffer.concat(chunks);
    expect(received.subarray(0, 15).toString()).toBe('HTTP/1.1 200 OK');
    expect(received.includes('invalid_request')).toBe(false);
    expect(received.length).toBeLessThan(zip.length);
  });
});
