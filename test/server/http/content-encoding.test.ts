// A body sent with a Content-Encoding the server does not decode (gzip) is refused with 415 in the
// error shape, naming the header, before the body is read: raw bytes over node:net against `serve`.
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ErrorBody } from '../../../src/contract/error-body.js';
import { tempDir } from '../../helpers.js';
import { useServe } from '../serve-helper.js';

const serve = useServe();

/** Sends `head` and only the first bytes of `body` (Content-Length says all of it): the answer must come anyway. */
function partial(port: number, head: string, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (data) => {
      answer += data.toString('latin1');
      if (/\r\n\r\n[\s\S]*\}/.test(answer)) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', reject);
    socket.write(`${head}Content-Length: ${body.length}\r\n\r\n`);
    socket.write(body.subarray(0, 8));
  });
}

describe('Content-Encoding on a request body', () => {
  it('is answered 415 naming the header, on a JSON route and on an upload, before the body is read', async () => {
    const served = await serve(['--port', '0', '--data-dir', tempDir('nodereg-encoding-'), '--log', 'off']);
    const port = Number(new URL(served.url).port);
    const gzipped = gzipSync(JSON.stringify({ id: 'x', name: 'x'.repeat(5000) }));
    const upload = `/uploads/00000000-0000-0000-0000-000000000000?expires=${Math.floor(Date.now() / 1000) + 600}&signature=${'0'.repeat(64)}`;
    for (const head of [
      'POST /publishers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n',
      `PUT ${upload} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/zip\r\nContent-Encoding: gzip\r\n`,
    ]) {
      const answer = await partial(port, head, gzipped);
      expect(answer).toMatch(/^HTTP\/1\.1 415 /);
      const body = ErrorBody.parse(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)));
      expect(body.error).toBe('unsupported_media_type');
      expect(body.message).toBe(
        'the server does not decode Content-Encoding: gzip; send the body unencoded (no Content-Encoding header)',
      );
    }
    // identity is no encoding: the request goes on to authentication as before.
    const identity = await fetch(`${served.url}/publishers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
      body: '{}',
    });
    expect(identity.status).toBe(401);
    await served.stop();
  });
});

/** Sends a whole request (`Connection: close`) and resolves to the whole answer, as bytes. */
function exchange(port: number, head: string, body: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (data) => chunks.push(data));
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
    socket.end(
      Buffer.concat([Buffer.from(`${head}Connection: close\r\nContent-Length: ${body.length}\r\n\r\n`), body]),
    );
  });
}

describe('a body that is not JSON', () => {
  it('is answered 400 naming the byte where it breaks, never its bytes: a registry route, and AI submissions inline and in the body worker', async () => {
    const token = `nrg_u_admin${'a'.repeat(32)}`;
    const served = await serve(['--port', '0', '--data-dir', tempDir('nodereg-malformed-'), '--log', 'off'], {
      env: { NODEREG_ADMIN_TOKEN: token },
    });
    const port = Number(new URL(served.url).port);
    const secret = 'SECRET-IN-THE-BODY';
    const gzipped = gzipSync(JSON.stringify({ id: 'x', description: secret }));
    /** A submission cut short inside its image: `size` bytes of base64 after the secret (over 256 KiB goes to the worker). */
    const cut = (size: number) =>
      Buffer.from(`{"subject":"${secret}","image":"data:image/png;base64,${'A'.repeat(size)}`);
    for (const [path, body, message] of [
      ['/publishers', gzipped, `malformed JSON at byte 0 of ${gzipped.length}`],
      ['/publishers', Buffer.from(`{"id":"x","name":${secret}}`), `malformed JSON at byte 17 of ${secret.length + 18}`],
      [
        '/proxy/img/v1/ai/image-relight',
        cut(1000),
        `malformed JSON: the body ends after ${cut(1000).length} bytes, before its JSON does`,
      ],
      [
        '/proxy/img/v1/ai/image-relight',
        cut(400_000),
        `malformed JSON: the body ends after ${cut(400_000).length} bytes, before its JSON does`,
      ],
      [
        '/proxy/img/v1/ai/image-relight',
        Buffer.concat([Buffer.from(`{"subject":"${secret}"`), gzipped]),
        `malformed JSON at byte ${secret.length + 13} of ${secret.length + 13 + gzipped.length}`,
      ],
    ] as const) {
      const answer = await exchange(
        port,
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n`,
        body,
      );
      const text = answer.toString('latin1');
      expect(text, path).toMatch(/^HTTP\/1\.1 400 /);
      expect(ErrorBody.parse(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)))).toEqual({
        error: 'invalid_request',
        message,
      });
      expect(text).not.toContain(secret);
      expect(
        [...answer].every((byte) => byte < 0x80),
        'no byte of the body in the answer',
      ).toBe(true);
    }
    await served.stop();
  });
});
