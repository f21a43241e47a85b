// What a CI job reads from `publish`'s exit code: the CLI in-process, CI set, against
// a registry on port 0 (createRegistryServer, what `nodereg serve` runs). Each case is one a release pipeline meets: a re-run after the
// version was withdrawn, a tag moved to other files, a version the registry's scan flags.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { cliEnv, INSTALLED_BIN, startServer, tempDir, type TestServer } from '../helpers.js';
import { checkHints } from '../cli/hint-check.js';
import { runHints } from '../cli/hints.js';
import { commitAll, gitRepo } from '../package/fixtures.js';
import { createUser } from '../server/fixtures.js';

let registry: TestServer;

beforeAll(async () => {
  registry = await startServer();
  const created = await runInProcess(['publisher', 'create', 'ci'], { env: env() });
  expect(created.code, created.stderr).toBe(0);
});
afterAll(() => registry?.close());

const env = () => ({ NODEREG_REGISTRY: registry.url, NODEREG_TOKEN: registry.adminToken });

/** A committed node project; `files` are added to its tree. */
function project(files: Record<string, string> = {}) {
  const id = `ci-${randomBytes(4).toString('hex')}`;
  const dir = commitAll(
    gitRepo({
      'pyproject.toml': `[project]\nname = "${id}"\nversion = "1.0.0"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "ci"\n`,
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      ...files,
    }),
  );
  return { id, dir };
}

describe('publish in CI: the exit code says what happened', () => {
  it('--skip-existing for a withdrawn (deleted) version is exit 3, naming it, with a hint to bump the version', {
    timeout: 60_000,
  }, async () => {
    const { id, dir } = project();
    expect((await runInProcess(['publish', dir], { env: env() })).code).toBe(0);
    const withdrawn = await runInProcess(['version', 'withdraw', id, '1.0.0', '--yes'], { env: env() });
    expect(withdrawn.code, withdrawn.stderr).toBe(0);

    for (const flags of [['--skip-existing'], ['--skip-existing', '--json'], []]) {
      const again = await runInProcess(['publish', dir, ...flags], { env: env() });
      expect(again.code, again.stderr).toBe(3);
      expect(again.stderr).toContain(
        `error: ${id} 1.0.0 was withdrawn (deleted) on ${registry.url}: a deleted version cannot be published again\n`,
      );
      expect(again.stderr).toContain('hint: bump the version in pyproject.toml and publish that\n');
      if (flags.includes('--json'))
        expect(JSON.parse(again.stdout)).toMatchObject({ error: { code: 'conflict', status: 409 } });
      else expect(again.stdout).toBe('');
    }
  });

  it('a version the registry flags after its upload is exit 2 (as local findings are), with the reason and what to do', {
    timeout: 60_000,
  }, async () => {
    const { id, dir } = project({ 'nodes/run.py': 'def run(source):\n    return eval(source)\n' });
    const published = await runInProcess(['publish', dir, '--accept-findings', '--json'], { env: env() });
    expect(published.code, published.stderr).toBe(2);
    const error = JSON.parse(published.stdout).error;
    expect(error).toMatchObject({ code: 'flagged' });
    expect(error.message).toMatch(
      new RegExp(
        `^the registry flagged ${id} 1\\.0\\.0 \\(${registry.url}\\): scan: dynamic-execution at nodes/run\\.py:2.*; nobody can install it unless an admin lifts the flag$`,
      ),
    );
    expect(error.hint).toContain(`\`nodereg node versions ${id} --reasons\``);
    const [reasons] = await runHints(published, { env: env() });
    expect(reasons.result.code, reasons.result.stderr).toBe(0);
    expect(reasons.result.stdout).toContain('dynamic-execution');

    // The job's re-run with --skip-existing does not turn it green.
    const rerun = await runInProcess(['publish', dir, '--accept-findings', '--skip-existing'], { env: env() });
    expect(rerun.code, rerun.stderr).toBe(2);
    expect(rerun.stderr).toContain(`error: the registry flagged ${id} 1.0.0`);
    expect(rerun.stdout).toBe('');
  });

  it('a GITHUB_OUTPUT it cannot write fails naming the variable, and says the version is published', {
    timeout: 60_000,
  }, async () => {
    const { id, dir } = project();
    const outputs = `${tempDir()}/missing/dir/out`;
    const published = await runInProcess(['publish', dir], { env: { ...env(), GITHUB_OUTPUT: outputs } });
    expect(published.code, published.stderr).toBe(1);
    expect(published.stderr).toContain(
      `error: ${id} 1.0.0 is published (${registry.url}/archives/ci/${id}/1.0.0/node.zip), but GITHUB_OUTPUT (${outputs}) cannot be written: ENOENT`,
    );
    expect(published.stderr).toContain(
      'hint: set GITHUB_OUTPUT to a writable file or unset it, then run the same publish with --skip-existing',
    );
    const json = await runInProcess(['publish', dir, '--skip-existing', '--json'], {
      env: { ...env(), GITHUB_OUTPUT: outputs },
    });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error.message).toContain('GITHUB_OUTPUT');
  });

  it('a node id another publisher holds is exit 4 naming [project] name to change, not the token', {
    timeout: 60_000,
  }, async () => {
    const { id, dir } = project();
    expect((await runInProcess(['publish', dir], { env: env() })).code).toBe(0);
    expect((await runInProcess(['publisher', 'create', 'ci-other'], { env: env() })).code).toBe(0);
    const taken = await runInProcess(['publish', dir, '--publisher', 'ci-other'], { env: env() });
    expect(taken.code, taken.stderr).toBe(4);
    expect(taken.stderr).toContain(`error: node ${id} belongs to publisher ci; choose another node id\n`);
    expect(taken.stderr).toContain(
      'hint: node ids are unique on a registry: rename the node ([project] name in pyproject.toml)\n',
    );
    expect(taken.stderr).not.toContain('token belongs');
  });

  it('--create-publisher creates nothing when another publisher holds the node id (the publish would be refused after)', {
    timeout: 60_000,
  }, async () => {
    const { id, dir } = project();
    expect((await runInProcess(['publish', dir], { env: env() })).code).toBe(0);
    const taken = await runInProcess(['publish', dir, '--publisher', 'ci-squat', '--create-publisher'], { env: env() });
    expect(taken.code, taken.stderr).toBe(4);
    expect(taken.stderr).toContain(`error: node ${id} belongs to publisher ci; choose another node id\n`);
    expect(taken.stderr).toContain(
      'hint: node ids are unique on a registry: rename the node ([project] name in pyproject.toml)\n',
    );
    expect(taken.stderr).not.toContain('created publisher');
    expect((await fetch(`${registry.url}/publishers/ci-squat`)).status).toBe(404);
    // Banned, the node answers 403 to anyone but an admin: still someone else's, as no publisher of ours exists yet.
    const ban = await fetch(`${registry.url}/publishers/ci/nodes/${id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${registry.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'NodeStatusBanned' }),
    });
    expect(ban.status, await ban.text()).toBe(200);
    const mallory = await createUser(registry, `mallory-${id}`);
    const banned = await runInProcess(['publish', dir, '--publisher', 'ci-squat', '--create-publisher'], {
      env: { ...env(), NODEREG_TOKEN: mallory.token },
    });
    expect(banned.code, banned.stderr).toBe(4);
    expect(banned.stderr).toContain(
      `error: node ${id} belongs to another publisher (it is banned); choose another node id\n`,
    );
    expect(banned.stderr).not.toContain('created publisher');
    expect((await fetch(`${registry.url}/publishers/ci-squat`)).status).toBe(404);
  });

  it('--create-publisher refuses early, naming the node, when a Deleted node of another publisher holds the id (it created the publisher, then failed)', {
    timeout: 60_000,
  }, async () => {
    const { id, dir } = project();
    expect((await runInProcess(['publish', dir], { env: env() })).code).toBe(0);
    const deleted = await fetch(`${registry.url}/publishers/ci/nodes/${id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${registry.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'NodeStatusDeleted' }),
    });
    expect(deleted.status, await deleted.text()).toBe(200);
    const erin = await createUser(registry, `erin-${id}`);
    const taken = await runInProcess(['publish', dir, '--publisher', 'ci-erin', '--create-publisher'], {
      env: { ...env(), NODEREG_TOKEN: erin.token },
    });
    expect(taken.code, taken.stderr).toBe(4);
    expect(taken.stderr).toContain(`error: node ${id} belongs to publisher ci; choose another node id\n`);
    expect(taken.stderr).not.toContain('created publisher');
    expect((await fetch(`${registry.url}/publishers/ci-erin`)).status).toBe(404);
  });

  it('publish --help lists the exit codes a CI job reads', async () => {
    const help = await runInProcess(['publish', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      'Exit codes:\n  0    published; or, with --skip-existing, the same archive was already published\n',
    );
    expect(help.stdout).toMatch(/\n  2 .*\n .*or the registry flagged the version after its upload/);
    expect(help.stdout).toContain(
      '\n  130  interrupted by Ctrl-C (SIGINT)\n  143  terminated by SIGTERM (e.g. a cancelled CI job)\n',
    );
  });
});

/**
 * A registry that restarts: a proxy on 127.0.0.1 in front of the real one that, on a chosen request,
 * drops it unanswered (or, with `after`, answers it first) and then refuses every connection for `downMs`;
 * or that holds a chosen request, never answering it (a registry that hangs).
 */
async function restartingProxy() {
  let upstream: URL | undefined;
  const triggers = new Map<string, { downMs: number; after: boolean }>();
  const holds = new Set<string>();
  const seen: string[] = [];
  let port = 0;
  const server = http.createServer((req, res) => {
    const line = `${req.method} ${req.url!.replace(/\?.*$/, '')}`;
    seen.push(line);
    if ([...holds].some((prefix) => line.startsWith(prefix))) return;
    const key = [...triggers.keys()].find((prefix) => line.startsWith(prefix));
    const trigger = key === undefined ? undefined : triggers.get(key);
    if (key !== undefined) triggers.delete(key);
    const goDown = () => {
      server.close();
      server.closeAllConnections();
      setTimeout(() => server.listen(port, '127.0.0.1'), trigger!.downMs);
    };
    if (trigger && !trigger.after) {
      req.socket.destroy();
      return goDown();
    }
    const forward = http.request(
      { host: upstream!.hostname, port: upstream!.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
        if (trigger) res.on('finish', goDown);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    forwardTo: (url: string) => (upstream = new URL(url)),
    /** The next request starting with `prefix` (`PUT /upload`) takes the registry down for `downMs`; with `after`, once it is answered. */
    restartOn: (prefix: string, downMs: number, after = false) => triggers.set(prefix, { downMs, after }),
    /** Requests starting with `prefix` are never answered, nor their bodies read. */
    hold: (prefix: string) => holds.add(prefix),
    unhold: (prefix: string) => holds.delete(prefix),
    close: () => new Promise<void>((done) => server.close(() => done()).closeAllConnections()),
  };
}

type RestartingProxy = Awaited<ReturnType<typeof restartingProxy>>;

/** Runs `steps` with a registry of its own behind a restarting proxy (its upload URLs too, as behind a load balancer), publisher `ci` made. */
async function behindProxy(steps: (proxy: RestartingProxy) => Promise<void>): Promise<void> {
  const proxy = await restartingProxy();
  const behind = await startServer({ publicUrl: proxy.url, adminToken: registry.adminToken });
  proxy.forwardTo(behind.url);
  try {
    expect(
      (await runInProcess(['publisher', 'create', 'ci'], { env: { ...env(), NODEREG_REGISTRY: behind.url } })).code,
    ).toBe(0);
    await steps(proxy);
  } finally {
    await proxy.close();
    await behind.close();
  }
}

describe('a registry that restarts while a CI job publishes', () => {
  // 1.5 s down: past the client's retries (0.3 s + 0.6 s), within its restart window (15 s); the next try, at 2.1 s, finds it up
  it('is waited for: down 1.5 s before the publish request and 1.5 s during the upload, publish still exits 0', {
    timeout: 60_000,
  }, async () => {
    await behindProxy(async (proxy) => {
      const { id, dir } = project();
      proxy.restartOn('GET /limits', 1_500, true);
      proxy.restartOn('PUT /upload', 1_500);
      const published = await runInProcess(['publish', dir, '--json', '--verbose'], {
        env: { ...env(), NODEREG_REGISTRY: proxy.url },
      });
      expect(published.code, published.stderr).toBe(0);
      expect(JSON.parse(published.stdout)).toMatchObject({
        node_id: id,
        version: '1.0.0',
        status: 'NodeVersionStatusActive',
      });
      expect(published.stderr).toMatch(/↻ retry \d+: POST .*\/versions/);
      expect(published.stderr, published.stderr).toMatch(/↻ upload attempt 1 failed/);
      expect(proxy.seen.filter((line) => line.startsWith('PUT /upload'))).toHaveLength(2);
    });
  });

  it('a refused connection on the first request (a wrong URL) fails at once: two short retries, exit 1 naming the URL', async () => {
    const proxy = await restartingProxy();
    await proxy.close();
    const started = Date.now();
    const shown = await runInProcess(['node', 'show', 'some-node', '--verbose'], {
      env: { NODEREG_REGISTRY: proxy.url },
    });
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain('↻ retry 2: GET');
    expect(shown.stderr).not.toContain('↻ retry 3');
    expect(shown.stderr).toContain(`error: cannot reach ${proxy.url}/nodes/some-node`);
    expect(shown.stderr).toMatch(/hint: .*URL/);
    expect(Date.now() - started).toBeLessThan(10_000); // a wide bound: about 1 s, not the restart window
  });
});

describe('a CI job cancelled (SIGTERM) while it publishes', () => {
  /** Spawns publish, sends `signal` once `ready()` holds, resolves to how it ended and its stderr. */
  async function cancelled(dir: string, registryUrl: string, ready: () => boolean, signal: NodeJS.Signals) {
    const child = spawn(process.execPath, [INSTALLED_BIN, 'publish', dir], {
      env: { ...cliEnv(tempDir()), ...env(), NODEREG_REGISTRY: registryUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const ended = new Promise<{ code: number | null; signal: string | null }>((done) =>
      child.on('close', (code, by) => done({ code, signal: by })),
    );
    for (let i = 0; i < 200 && !ready(); i++) await new Promise((r) => setTimeout(r, 25));
    expect(ready()).toBe(true);
    child.kill(signal);
    const end = await ended;
    await checkHints('', stderr);
    return { ...end, stderr: () => stderr };
  }

  it('exits 143 before the publish request and after it alike (130 for SIGINT), naming what it leaves behind', {
    timeout: 60_000,
  }, async () => {
    await behindProxy(async (proxy) => {
      // before: the registry holds GET /limits, so the publish request is not sent yet
      proxy.hold('GET /limits');
      const early = project();
      const before = await cancelled(early.dir, proxy.url, () => proxy.seen.includes('GET /limits'), 'SIGTERM');
      expect({ code: before.code, signal: before.signal }).toEqual({ code: 143, signal: null });
      expect(proxy.seen.some((line) => line.startsWith('POST'))).toBe(false);

      // after: the version is registered, and the upload hangs
      const held = new Set(proxy.seen);
      proxy.unhold('GET /limits');
      proxy.hold('PUT /upload');
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        const { id, dir } = project();
        const during = await cancelled(
          dir,
          proxy.url,
          () => proxy.seen.some((line) => line.startsWith('PUT /upload') && !held.has(line)),
          signal,
        );
        for (const line of proxy.seen) held.add(line);
        expect({ code: during.code, signal: during.signal }).toEqual({
          code: signal === 'SIGTERM' ? 143 : 130,
          signal: null,
        });
        expect(during.stderr()).toContain(
          `error: interrupted during the upload: ${id} 1.0.0 is registered on ${proxy.url}`,
        );
      }
    });
  });
});
