// --retry-window at work: the CLI in-process (CI set) against a port nobody listens
// on, and against a registry still starting behind a relay on 127.0.0.1 that resets its first
// connections. Tries are counted from --verbose's request lines and the relay's connections, not timed.
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServer, tempDir, type TestServer } from '../helpers.js';
import { closedPort, runInProcess } from './in-process.js';
import { writeTree } from '../package/fixtures.js';
import { createPublisher, createUser, publishAndUpload } from '../server/fixtures.js';

let registry: TestServer;
let token: string;
const relays: { close: () => void }[] = [];

beforeAll(async () => {
  registry = await startServer();
  const owner = await createUser(registry, 'waiter');
  token = owner.token;
  await createPublisher(registry, owner, 'waiters');
  await publishAndUpload(registry, token, 'waiters', 'shown-node', '1.0.0');
});
afterAll(async () => {
  for (const relay of relays) relay.close();
  await registry?.close();
});

/** A relay to the registry that resets (RST) its first `resets` connections, as a registry still starting behind a balancer. */
async function startingRegistry(resets: number) {
  let connections = 0;
  const sockets = new Set<Socket>();
  const relay = createServer((socket) => {
    if (++connections <= resets) return void socket.resetAndDestroy();
    const target = new URL(registry.url);
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on('error', () => {}).on('close', () => (sockets.delete(s), socket.destroy(), upstream.destroy()));
    }
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((done) => relay.listen(0, '127.0.0.1', done));
  relays.push({ close: () => (relay.close(), sockets.forEach((s) => s.destroy())) });
  return { url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`, connections: () => connections };
}

/** How many times --verbose's `stderr` says `path` was requested. */
const tries = (stderr: string, path: string) =>
  stderr.split('\n').filter((line) => line.startsWith('→ GET ') && line.endsWith(path)).length;

describe('--retry-window against a registry that is not there', () => {
  it('node show on a port nobody listens on: 0 tries once, the default three times (a wrong URL), a chosen window of 4 s goes on', async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const show = (...args: string[]) =>
      runInProcess(['node', 'show', 'some-node', '--verbose', ...args], { env: { NODEREG_REGISTRY: down } });
    const [none, standard, chosen] = await Promise.all([
      show('--retry-window', '0'),
      show(),
      show('--retry-window=4s'),
    ]);
    for (const result of [none, standard, chosen]) {
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(`error: cannot reach ${down}/nodes/some-node: ECONNREFUSED`);
    }
    expect(tries(none.stderr, '/nodes/some-node')).toBe(1);
    expect(none.stderr).not.toContain('↻');
    expect(tries(standard.stderr, '/nodes/some-node')).toBe(3);
    expect(standard.stderr).toMatch(/\nhint: .*--retry-window 5m waits longer for one that is starting\n/);
    // 0.3, 0.6 and 1.2 s apart fit in 4 s; the next, 2 s later, does not
    expect(tries(chosen.stderr, '/nodes/some-node')).toBe(4);
    expect(chosen.stderr).toMatch(/ECONNREFUSED \(4 tries in \d+\.\d s\)/);
  });

  it('publish with NODEREG_RETRY_WINDOW=0: one try of the registry, exit 1', async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const dir = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "fast-fail"\nversion = "1.0.0"\n\n[tool.nodereg]\npublisher = "waiters"\n',
      '__init__.py': '',
    });
    const result = await runInProcess(['publish', dir, '--verbose'], {
      env: { NODEREG_REGISTRY: down, NODEREG_TOKEN: token, NODEREG_RETRY_WINDOW: '0' },
    });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`error: cannot reach ${down}/limits: ECONNREFUSED\n`);
    expect(tries(result.stderr, '/limits')).toBe(1);
  });
});

describe('--retry-window against a registry still starting (its first connections reset)', () => {
  it('node show: the default gives up after its short retries; a chosen window waits and shows the node', async () => {
    const early = await startingRegistry(6); // both reads of node show, three tries each
    const standard = await runInProcess(['node', 'show', 'shown-node'], { env: { NODEREG_REGISTRY: early.url } });
    expect(standard.code, standard.stderr).toBe(1);
    expect(standard.stderr).toMatch(/ECONNRESET \(3 tries in \d+\.\d s\)/);
    // the relay, in this process too, may count the last reset connection after the CLI has returned
    await expect.poll(() => early.connections()).toBe(6);

    const late = await startingRegistry(6);
    const waited = await runInProcess(['node', 'show', 'shown-node', '--retry-window', '20s'], {
      env: { NODEREG_REGISTRY: late.url },
    });
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toContain('shown-node');
    expect(late.connections()).toBeGreaterThan(6);
  });

  it('publish --retry-window 20s: a CI job that starts while its registry is being upgraded publishes, exit 0', async () => {
    const late = await startingRegistry(3);
    const dir = writeTree(tempDir(), {
      'pyproject.toml':
        '[project]\nname = "patient-node"\nversion = "1.0.0"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "waiters"\n',
      '__init__.py': '',
    });
    const result = await runInProcess(['publish', dir, '--retry-window', '20s', '--json'], {
      env: { NODEREG_REGISTRY: late.url, NODEREG_TOKEN: token },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      node_id: 'patient-node',
      version: '1.0.0',
      status: 'NodeVersionStatusActive',
    });
    expect(late.connections()).toBeGreaterThan(3);
  });
});

describe('a wait is never silent (issue 37)', () => {
  it('NODEREG_RETRY_WINDOW=2s against a registry that is down: a line when the wait starts, and the hint names the window used', async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const chosen = await runInProcess(['node', 'show', 'some-node'], {
      env: { NODEREG_REGISTRY: down, NODEREG_RETRY_WINDOW: '2s' },
    });
    expect(chosen.code).toBe(1);
    expect(chosen.stderr).toContain(
      `waiting for GET ${down}/nodes/some-node (ECONNREFUSED), trying again for up to 2s (the retry window)`,
    );
    expect(chosen.stderr).toContain('within the retry window you set (NODEREG_RETRY_WINDOW 2s)');
    expect(chosen.stderr).not.toContain('--retry-window 5m waits longer');
    const standard = await runInProcess(['node', 'show', 'some-node'], { env: { NODEREG_REGISTRY: down } });
    expect(standard.stderr).toContain('the default retry window is 15s: --retry-window 5m waits longer');
  });
});
