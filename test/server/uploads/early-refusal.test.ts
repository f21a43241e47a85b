// An upload refused before its body is read (403 bad signature, 415) against the real `serve` process:
// every client still sending its body gets the answer, whether it reads while sending (Node, curl) or
// only once its body is sent (Python's requests); a client that goes on sending is cut within DROP.
import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DROP } from '../../../src/server/http/index.js';
import { tempDir } from '../../helpers.js';
import { useServe } from '../serve-helper.js';

const serve = useServe();

const MiB = 1024 * 1024;
const BODY = 32 * MiB;
const CLIENTS = 20;
const chunk = Buffer.alloc(MiB, 7);

const uploadPath = () =>
  `/uploads/00000000-0000-0000-0000-000000000000?expires=${Math.floor(Date.now() / 1000) + 600}&signature=${'0'.repeat(64)}`;
const head = (type: string, length: string) =>
  `PUT ${uploadPath()} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\n${length}\r\n\r\n`;

/** node:http, reading the answer while it writes the body: resolves to the status, or the error. */
function whileSending(url: string, type: string): Promise<string> {
  return new Promise((resolve) => {
    const req = request(`${url}${uploadPath()}`, {
      method: 'PUT',
      headers: { 'content-type': type, 'content-length': BODY },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code}`));
    let sent = 0;
    const write = () => {
      while (sent < BODY) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

/** A raw socket that writes the whole body before it reads anything. */
function afterSending(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    socket.pause();
    let answer = '';
    const done = (why: string) => resolve(/^HTTP\/1\.1 (\d+)/.exec(answer)?.[1] ?? `no answer (${why})`);
    socket.on('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    socket.on('end', () => done('end'));
    socket.write(head('application/zip', `Content-Length: ${BODY}`));
    let sent = 0;
    const write = () => {
      while (sent < BODY) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', write);
      }
      socket.write('', () => {
        socket.on('data', (data) => (answer += data));
        socket.resume();
      });
    };
    write();
  });
}

/** A client that never stops sending (and ignores the server's FIN): how long and how much until it is cut. */
function endless(port: number, pace: 'fast' | 'drip'): Promise<{ status?: string; ms: number; sent: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    let sent = 0;
    socket.on('data', (data) => (answer += data));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(drip);
      resolve({ status: /^HTTP\/1\.1 (\d+)/.exec(answer)?.[1], ms: Date.now() - started, sent });
    });
    socket.write(head('application/zip', 'Transfer-Encoding: chunked'));
    const piece = Buffer.concat([Buffer.from(`${MiB.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    const drip = setInterval(() => pace === 'drip' && !socket.destroyed && socket.write('1\r\nx\r\n'), 100);
    const write = () => {
      while (pace === 'fast' && !socket.destroyed) {
        sent += MiB;
        if (!socket.write(piece)) return void socket.once('drain', write);
      }
    };
    write();
  });
}

const tally = (results: string[]) =>
  results.reduce<Record<string, number>>((all, r) => ({ ...all, [r]: (all[r] ?? 0) + 1 }), {});

describe('an upload refused before its body is read', () => {
  it('gives every client its answer, and still cuts a client that goes on sending', async () => {
    const served = await serve(['--port', '0', '--data-dir', tempDir('nodereg-early-'), '--log', 'off']);
    const port = Number(new URL(served.url).port);

    const signature = await Promise.all(
      Array.from({ length: CLIENTS }, () => whileSending(served.url, 'application/zip')),
    );
    expect(tally(signature)).toEqual({ 403: CLIENTS });
    const type = await Promise.all(Array.from({ length: CLIENTS }, () => whileSending(served.url, 'text/plain')));
    expect(tally(type)).toEqual({ 415: CLIENTS });
    const sequential = await Promise.all(Array.from({ length: CLIENTS }, () => afterSending(port)));
    expect(tally(sequential)).toEqual({ 403: CLIENTS });

    // Bounded: a drip is cut after DROP.ms, an endless fast sender after about DROP.bytes.
    const [drip, fast] = await Promise.all([endless(port, 'drip'), endless(port, 'fast')]);
    expect(drip.status).toBe('403');
    expect(drip.ms).toBeGreaterThanOrEqual(DROP.ms - 100);
    expect(drip.ms).toBeLessThan(DROP.ms + 3_000);
    expect(fast.status).toBe('403');
    expect(fast.sent).toBeLessThan(DROP.bytes + 64 * MiB);
    expect(fast.ms).toBeLessThan(DROP.ms + 3_000);

    const health = await fetch(`${served.url}/healthz`);
    expect(health.status).toBe(200);
    expect((await served.stop()).code).toBe(0);
  }, 60_000);
});
