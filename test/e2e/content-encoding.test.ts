// A body sent with a Content-Encoding the server does not decode (gzip) is refused with 415 in the
// error shape, naming the header, before the body is read: raw bytes over node:net against `serve`.
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ErrorBody } from '../../src/contract/error-body.js';
import { tempDir } from '../helpers.js';
import { serve } from './serve-helper.js';

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
      expect(body.message).toBe('the server does not decode Content-Encoding: gzip; send the body unencoded (no Content-Encoding header)');
    }
    // identity is no encoding: the request goes on to authentication as before.
    const identity = await fetch(`${served.url}/publishers`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'identity' }, body: '{}' });
    expect(identity.status).toBe(401);
    await served.stop();
  });
});
