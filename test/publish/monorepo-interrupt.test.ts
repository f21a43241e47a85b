// Ctrl-C during `publish` of many nodes: the node being sent says what it leaves, and the nodes packed
// and waiting for their turn end without a word of their own (nothing of them was sent). In-process:
// the signal is emitted to the handlers the run installed, while a forwarding proxy of ours holds the
// first node's publish request.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHints } from '../cli/hints.js';
import { runInProcess } from '../cli/in-process.js';
import { startServer, type TestServer } from '../helpers.js';
import { committedRepo } from '../package/fixtures.js';

let server: TestServer;
let proxy: http.Server;
let proxyUrl: string;
/** Resolves when a publish request reaches the proxy, which holds it unanswered. */
let publishArrived: () => void = () => {};

beforeAll(async () => {
  server = await startServer();
  const reply = await fetch(`${server.url}/publishers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'halt' }),
  });
  expect(reply.status).toBe(201);
  proxy = http.createServer((req, res) => {
    if (req.method === 'POST' && /\/versions$/.test(req.url ?? '')) {
      publishArrived();
      req.socket.on('close', () => res.destroy());
      return;
    }
    const upstream = http.request(
      new URL(req.url!, server.url),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await server?.close();
});

const manifest = (id: string) =>
  `[project]\nname = "${id}"\nversion = "1.0.0"\ndescription = "d"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "halt"\n`;

describe('publish of many nodes, interrupted', () => {
  it('while the first is sent: it says what it leaves, the others were never sent (exit 130)', async () => {
    const dir = committedRepo({
      'a/pyproject.toml': manifest('halt-a'),
      'a/__init__.py': '',
      'b/pyproject.toml': manifest('halt-b'),
      'b/__init__.py': '',
    });
    const arrived = new Promise<void>((resolve) => {
      publishArrived = resolve;
    });
    const running = runInProcess(['publish', 'a', 'b'], {
      cwd: dir,
      env: { NODEREG_REGISTRY: proxyUrl, NODEREG_TOKEN: server.adminToken },
    });
    await arrived;
    process.emit('SIGINT', 'SIGINT');
    const run = await running;
    expect(run.code).toBe(130);
    expect(run.stderr).toContain('error: a: ');
    expect(run.stderr).toContain('no node was published before it; not tried: b');
    expect(run.stderr).not.toContain('halt-b 1.0.0 was sent');
    expect((await fetch(`${server.url}/nodes/halt-b`)).status).toBe(404);
    // The hints, run as printed against the registry itself: finishing the node publishes it; withdrawing
    // it asks first, and with no terminal to ask on says to add --yes.
    const [finish, withdraw] = await runHints(run.stderr, {
      cwd: dir,
      env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: server.adminToken },
    });
    expect(finish.argv).toEqual(['publish', 'a', '--skip-existing']);
    expect(finish.result.code, finish.result.stderr).toBe(0);
    expect((await fetch(`${server.url}/nodes/halt-a/versions/1.0.0`)).status).toBe(200);
    expect(withdraw.argv).toEqual(['version', 'withdraw', 'halt-a', '1.0.0']);
    expect(withdraw.result.code).toBe(2);
    expect(withdraw.result.stderr).toContain('`nodereg version withdraw halt-a 1.0.0 --yes`');
  });
});
