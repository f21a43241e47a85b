// Webhooks per publisher (issue 36): owners add, list and remove them; a publish and a status change
// are POSTed to a real receiver on 127.0.0.1, signed with the secret shown once; a receiver answering
// 500 twice gets a third attempt, and one that never answers does not hold the publish.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { startServer, type TestServer } from '../helpers.js';
import { call, createPublisher, createUser, expectError, publishAndUpload, type TestUser } from '../server/fixtures.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1: `/ok` answers 204, `/flaky` 500 twice then 204, `/hang` never. */
async function receiver() {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  let flaky = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (req.url === '/hang') return void hanging.push(res);
      res.statusCode = req.url === '/flaky' && ++flaky <= 2 ? 500 : 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    server.close();
  };
  return { url, received, at: (path: string) => received.filter((r) => r.path === path), close };
}

let server: TestServer;
let hooks: Awaited<ReturnType<typeof receiver>>;
let alice: TestUser;
beforeAll(async () => {
  hooks = await receiver();
  // a held publish would wait out the 10-minute attempt: far past the test's time
  server = await startServer({ webhooks: { allowPrivate: true, backoffMs: 10, timeoutMs: 600_000 } });
  alice = await createUser(server, 'hook-alice');
  await createPublisher(server, alice, 'hooks-co');
});
afterAll(async () => {
  await server.close();
  hooks.close();
});

const cli = (...args: string[]) => runInProcess(['--registry', server.url, '--token', alice.token, ...args]);
const addHook = (url: string, events?: string[], token = alice.token) =>
  call(server.url, 'POST', '/publishers/hooks-co/webhooks', { token, body: { url, ...(events ? { events } : {}) } });
const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('publisher webhooks', () => {
  it('sends a signed publish and status change; retries a 500 twice; a hanging receiver holds nothing', async () => {
    const added = await cli('publisher', 'webhook', 'add', 'hooks-co', `${hooks.url}/ok`, '--json');
    expect(added.code, added.stderr).toBe(0);
    const { id, secret, events } = JSON.parse(added.stdout);
    expect(events).toEqual(['version.published', 'version.status_changed']);
    const flaky = await addHook(`${hooks.url}/flaky`, ['version.published']);
    expect(flaky.status, flaky.text).toBe(201);
    expect((await addHook(`${hooks.url}/hang`)).status).toBe(201);

    // the upload is answered while the hanging receiver holds its delivery
    await publishAndUpload(server, alice.token, 'hooks-co', 'hooked', '1.0.0');
    await vi.waitFor(() => expect(hooks.at('/ok')).toHaveLength(1), { timeout: 10_000 });
    await vi.waitFor(() => expect(hooks.at('/hang')).toHaveLength(1), { timeout: 10_000 });
    const [published] = hooks.at('/ok');
    expect(published.headers['x-nodereg-event']).toBe('version.published');
    expect(published.headers['x-nodereg-signature']).toBe(sign(secret, published.body));
    expect(JSON.parse(published.body)).toMatchObject({
      event: 'version.published',
      publisher_id: 'hooks-co',
      node_id: 'hooked',
      version: '1.0.0',
      status: 'NodeVersionStatusActive',
    });

    await vi.waitFor(() => expect(hooks.at('/flaky')).toHaveLength(3), { timeout: 10_000 });
    const attempts = hooks.at('/flaky');
    expect(new Set(attempts.map((a) => a.headers['x-nodereg-delivery'])).size).toBe(1);
    expect(attempts[2].headers['x-nodereg-signature']).toBe(sign(flaky.body.secret, attempts[2].body));

    const withdrawn = await call(server.url, 'PUT', '/publishers/hooks-co/nodes/hooked/versions/1.0.0', {
      token: alice.token,
      body: { status: 'NodeVersionStatusDeleted' },
    });
    expect(withdrawn.status, withdrawn.text).toBe(200);
    await vi.waitFor(() => expect(hooks.at('/ok')).toHaveLength(2), { timeout: 10_000 });
    const changed = hooks.at('/ok')[1];
    expect(changed.headers['x-nodereg-event']).toBe('version.status_changed');
    expect(changed.headers['x-nodereg-signature']).toBe(sign(secret, changed.body));
    expect(JSON.parse(changed.body)).toMatchObject({
      version: '1.0.0',
      status: 'NodeVersionStatusDeleted',
      previous_status: 'NodeVersionStatusActive',
    });

    const listed = await cli('publisher', 'webhook', 'list', 'hooks-co');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${hooks.url}/flaky`);
    expect(listed.stdout).not.toContain('whsec_');
    const removed = await cli('publisher', 'webhook', 'remove', 'hooks-co', id);
    expect(removed.code, removed.stderr).toBe(0);
    const json = JSON.parse((await cli('publisher', 'webhook', 'list', 'hooks-co', '--json')).stdout);
    expect(json.map((h: { url: string }) => h.url)).toEqual([`${hooks.url}/flaky`, `${hooks.url}/hang`]);
    expect((await cli('publisher', 'webhook', 'remove', 'hooks-co', id)).code).toBe(5);
  });

  it('refuses a URL that is not http(s), an unknown event, and anyone but an owner', async () => {
    expectError(await addHook('ftp://hooks.example/x'), 400, 'invalid_request');
    expectError(await addHook('https://hooks.example/x', ['version.deleted']), 400, 'invalid_request');
    const bob = await createUser(server, 'hook-bob');
    expect((await addHook('https://hooks.example/x', undefined, bob.token)).status).toBe(403);
    const badEvents = await cli(
      'publisher',
      'webhook',
      'add',
      'hooks-co',
      'https://hooks.example/x',
      '--events',
      'push',
    );
    expect(badEvents.code).toBe(2);
    expect(badEvents.stderr).toContain('--events');
  });

  it('connects to the address its host check saw: a name resolving to loopback is refused at connect', async () => {
    // every name resolves to the receiver's loopback address, as a rebinding DNS answer would
    const resolve = ((_host: string, _options: object, callback: (e: null, all: LookupAddress[]) => void) =>
      callback(null, [{ address: '127.0.0.1', family: 4 }])) as unknown as LookupFunction;
    const port = new URL(hooks.url).port;
    const deliver = async (allowPrivate: boolean, path: string, until: (lines: string[]) => void) => {
      const lines: string[] = [];
      const registry = await startServer({
        webhooks: { allowPrivate, resolve, backoffMs: 10, timeoutMs: 10_000 },
        log: (line) => void lines.push(line),
      });
      try {
        const owner = await createUser(registry, `rebind-${path.slice(1)}`);
        await createPublisher(registry, owner, `rebind-${path.slice(1)}`);
        const added = await call(registry.url, 'POST', `/publishers/rebind-${path.slice(1)}/webhooks`, {
          token: owner.token,
          body: { url: `http://hooks.example:${port}${path}` },
        });
        expect(added.status, added.text).toBe(201);
        await publishAndUpload(registry, owner.token, `rebind-${path.slice(1)}`, 'rebound', '1.0.0');
        await vi.waitFor(() => until(lines), { timeout: 10_000 });
        return lines;
      } finally {
        await registry.close();
      }
    };
    // allowed: the POST reaches the receiver through the resolver's answer, not the system's DNS
    await deliver(true, '/pinned', () => expect(hooks.at('/pinned')).toHaveLength(1));
    // not allowed: the same answer is refused where the connection is made, and nothing reaches the receiver
    const lines = await deliver(false, '/refused', (log) => expect(log.join('\n')).toContain('given up'));
    expect(lines.join('\n')).toContain('hooks.example resolves to the internal address 127.0.0.1');
    expect(hooks.at('/refused')).toHaveLength(0);
  });

  it('refuses loopback and private receivers unless the registry allows them', async () => {
    const strict = await startServer();
    try {
      const owner = await createUser(strict, 'strict-owner');
      await createPublisher(strict, owner, 'strict-co');
      for (const url of ['http://127.0.0.1:9/x', 'http://localhost/x', 'http://[::1]/x', 'http://10.1.2.3/x']) {
        const refused = await call(strict.url, 'POST', '/publishers/strict-co/webhooks', {
          token: owner.token,
          body: { url },
        });
        expectError(refused, 400, 'invalid_request');
        expect(refused.body.message, url).toContain('--webhook-allow-private');
      }
    } finally {
      await strict.close();
    }
  });
});
