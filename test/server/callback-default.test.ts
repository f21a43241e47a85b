// The callback default follows the listening address: a registry reachable from elsewhere
// (`--host 0.0.0.0`) must not POST to its own loopback ports for any user who asks (issue 11).
import { afterAll, describe, expect, it } from 'vitest';
import { defaultCallbackAllow, isLoopbackHost } from '../../src/server/proxy/options.js';
import { startServer, type TestServer } from '../helpers.js';
import { call, createUser } from './fixtures.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString('base64');
const RELIGHT = '/proxy/img/v1/ai/image-relight';
const VIDEO = '/proxy/vid/extend';

const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((server) => server.close())));

/** A server listening on `host`, reached through 127.0.0.1. */
async function serverOn(host: string, callbackAllow?: string[]) {
  const server = await startServer({ host, proxy: { sandboxDelay: 60_000, callbackBackoff: 60_000, callbackAllow } });
  servers.push(server);
  const url = `http://127.0.0.1:${new URL(server.url).port}`;
  const user = await createUser({ ...server, url });
  const submit = (path: string, body: Record<string, unknown>) => call(url, 'POST', path, { token: user.token, body });
  return async () => [
    await submit(RELIGHT, { image: PNG, prompt: 'warm', webhook_url: 'http://127.0.0.1:6379/hook' }),
    await submit(VIDEO, { model: 'vidq2-pro', image: PNG, callback_url: 'http://localhost:9/cb' }),
    await submit(VIDEO, { model: 'vidq2-pro', image: PNG, callback_url: 'http://[::1]:9/cb' }),
  ];
}

describe('the default --callback-allow', () => {
  it('is loopback only for loopback hosts, none otherwise', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', '::1', 'localhost', 'LOCALHOST'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'registry.example.com', '::ffff:10.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
      expect(defaultCallbackAllow(host), host).toEqual([]);
    }
  });

  it('on --host 0.0.0.0 refuses loopback callback targets (400 naming the field)', async () => {
    for (const reply of await (await serverOn('0.0.0.0'))()) {
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.details?.[0]).toMatchObject({
        path: expect.stringMatching(/^(webhook_url|callback_url)$/),
        message: expect.stringMatching(/not allowed/),
      });
    }
  });

  it('on --host 0.0.0.0 allows them when --callback-allow says so', async () => {
    for (const reply of await (await serverOn('0.0.0.0', ['127.0.0.0/8', '::1', 'localhost']))())
      expect(reply.status, reply.text).toBe(200);
  });

  it('on --host 127.0.0.1 allows loopback targets as before', async () => {
    for (const reply of await (await serverOn('127.0.0.1'))()) expect(reply.status, reply.text).toBe(200);
  });
});
