// A CI job: the CLI in-process (CI set, spawned where stdout must be a file), a token from the environment. It talks to a real
// registry directly, or through a proxy on 127.0.0.1 that cuts chosen answers halfway (status and
// headers sent, then half the body, then the connection closed), as a load balancer or a dropped link does.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { cliEnv, INSTALLED_BIN, runCli, startServer, tempDir, type TestServer } from '../helpers.js';
import { checkHints } from '../cli/hint-check.js';
import { commitAll, gitRepo } from '../package/fixtures.js';
import { createPat, createPublisher, createUser } from '../server/fixtures.js';

let server: TestServer;
let token: string;
let proxy: http.Server;
let proxyUrl: string;
/** Requests (`METHOD /path`) whose next answer the proxy cuts, each once. */
const cutNext = new Set<string>();
const seen: string[] = [];

beforeAll(async () => {
  server = await startServer();
  const owner = await createUser(server, 'flaky-owner');
  await createPublisher(server, owner, 'flaky');
  token = await createPat(server, owner, 'flaky');
  const upstream = new URL(server.url);
  proxy = http.createServer((req, res) => {
    const line = `${req.method} ${req.url}`;
    seen.push(line);
    const cut = cutNext.delete(line);
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (!cut) {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          res.writeHead(answer.statusCode!, answer.headers);
          res.write(body.subarray(0, body.length >> 1), () => res.socket?.destroy());
        });
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  proxy.closeAllConnections();
  proxy.close();
  await server.close();
});

describe('an answer cut halfway', () => {
  it('of a GET is retried like a reset: publish (GET /limits) and node show --json finish, exit 0', {
    timeout: 60_000,
  }, async () => {
    const repo = commitAll(
      gitRepo({
        'pyproject.toml':
          '[project]\nname = "flaky-node"\nversion = "1.0.0"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "flaky"\n',
        '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      }),
    );
    const env = { NODEREG_TOKEN: token, NODEREG_REGISTRY: proxyUrl };

    cutNext.add('GET /limits');
    const published = await runInProcess(['publish', '--json'], { cwd: repo, env });
    expect(published.code, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({ node_id: 'flaky-node', version: '1.0.0', skipped: false });
    expect(seen.filter((line) => line === 'GET /limits')).toHaveLength(2);

    cutNext.add('GET /nodes/flaky-node');
    const shown = await runInProcess(['node', 'show', 'flaky-node', '--json'], { env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ node: { id: 'flaky-node' }, versions: [{ version: '1.0.0' }] });
    expect(seen.filter((line) => line === 'GET /nodes/flaky-node')).toHaveLength(2);
  });
});

describe('the token from a CI secret', () => {
  it('ending with a line break (a pasted secret) is used without it: publish exits 0', {
    timeout: 60_000,
  }, async () => {
    const repo = commitAll(
      gitRepo({
        'pyproject.toml':
          '[project]\nname = "secret-node"\nversion = "1.0.0"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "flaky"\n',
        '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      }),
    );
    const published = await runInProcess(['publish', '--json'], {
      cwd: repo,
      env: { NODEREG_TOKEN: `${token}\n`, NODEREG_REGISTRY: server.url },
    });
    expect(published.code, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({
      node_id: 'secret-node',
      version: '1.0.0',
      status: 'NodeVersionStatusActive',
    });
  });

  it('refused while a profile holds a live one: exit 4, the hint says NODEREG_TOKEN held it and wins over the profile', {
    timeout: 60_000,
  }, async () => {
    const home = tempDir('nodereg-home-');
    const login = await runInProcess(['login', '--no-input', '--registry', server.url], {
      home,
      input: `${token}\n`,
      env: { NODEREG_TOKEN: undefined },
    });
    expect(login.code, login.stderr).toBe(0);
    expect((await runInProcess(['whoami'], { home })).code).toBe(0); // the profile's token is live
    const refused = await runInProcess(['whoami', '--json'], {
      home,
      env: { NODEREG_TOKEN: 'nrg_pat_revokedlongago' },
    });
    expect(refused.code, refused.stderr).toBe(4);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(refused.stderr).toContain(
      `hint: NODEREG_TOKEN holds this token and ${server.url} refuses it (revoked, or made on another registry); it is used before any profile's token`,
    );
  });

  it('with "Bearer " before it, a second line, a control character inside or the quotes it was pasted with: exit 4 naming NODEREG_TOKEN, before any request', {
    timeout: 60_000,
  }, async () => {
    const repo = commitAll(
      gitRepo({
        'pyproject.toml':
          '[project]\nname = "odd-secret"\nversion = "1.0.0"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "flaky"\n',
        '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      }),
    );
    const cases: [string, string][] = [
      [`Bearer ${token}`, 'a space'],
      [`${token}\n# CI token`, 'a line break'],
      [`${token}\u001b[0m`, 'a control character'],
      [`"${token}"`, 'a quote ("), as pasted with the quotes around it'],
      [`'${token}'`, "a quote ('), as pasted with the quotes around it"],
    ];
    for (const [secret, what] of cases) {
      const before = seen.length;
      const published = await runInProcess(['publish', '--json'], {
        cwd: repo,
        env: { NODEREG_TOKEN: secret, NODEREG_REGISTRY: proxyUrl },
      });
      expect(published.code, published.stderr).toBe(4);
      expect(JSON.parse(published.stdout).error).toMatchObject({
        code: 'unauthorized',
        message: `NODEREG_TOKEN is not a token: it holds ${what}`,
      });
      expect(published.stderr).toContain('hint: a token is one word');
      expect(published.stdout + published.stderr).not.toContain(token);
      expect(seen.length).toBe(before);
    }
  });
});

describe('CI variables as a workflow passes them', () => {
  it('NODEREG_REGISTRY with a line break is used without it; empty (a variable not defined) is unset, as an empty NODEREG_PROFILE is', {
    timeout: 60_000,
  }, async () => {
    const pasted = await runInProcess(['whoami', '--json'], {
      env: { NODEREG_REGISTRY: `${server.url}\n`, NODEREG_TOKEN: token },
    });
    expect(pasted.code, pasted.stderr).toBe(0);
    expect(JSON.parse(pasted.stdout)).toMatchObject({ kind: 'pat', publisher: { id: 'flaky' } });

    const home = tempDir('nodereg-home-');
    const login = await runInProcess(['login', '--no-input', '--registry', server.url], { home, input: `${token}\n` });
    expect(login.code, login.stderr).toBe(0);
    const fromProfile = await runInProcess(['whoami', '--json'], {
      home,
      env: { NODEREG_REGISTRY: '', NODEREG_PROFILE: '', NODEREG_TOKEN: '' },
    });
    expect(fromProfile.code, fromProfile.stderr).toBe(0);
    expect(JSON.parse(fromProfile.stdout)).toMatchObject({ kind: 'pat', publisher: { id: 'flaky' } });
  });
});

describe('stdout redirected into the project', () => {
  /** `nodereg ARGS > repo/publish.json`, as a script that keeps the result writes it; resolves to the exit code and stderr. */
  async function publishInto(repo: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
    const out = openSync(join(repo, 'publish.json'), 'w');
    const env = cliEnv(tempDir('nodereg-home-'), { NODEREG_TOKEN: token, NODEREG_REGISTRY: server.url });
    const child = spawn(process.execPath, [INSTALLED_BIN, 'publish', '--json', ...args], {
      cwd: repo,
      env,
      stdio: ['ignore', out, 'pipe'],
    });
    closeSync(out);
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((done) => child.on('close', done));
    await checkHints('', stderr);
    return { code, stderr };
  }

  it("is not packed (it holds the run's output, not the node's), and the re-run with --skip-existing finds the same archive", {
    timeout: 60_000,
  }, async () => {
    const repo = commitAll(
      gitRepo({
        'pyproject.toml':
          '[project]\nname = "kept-result"\nversion = "1.0.0"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "flaky"\n',
        '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      }),
    );
    const first = await publishInto(repo, []);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain("warning: publish.json is left out: this run's output goes there");
    const published = JSON.parse(readFileSync(join(repo, 'publish.json'), 'utf8'));
    expect(published).toMatchObject({ node_id: 'kept-result', files: 2, skipped: false });
    const again = await publishInto(repo, ['--skip-existing']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(repo, 'publish.json'), 'utf8'))).toMatchObject({
      archive_sha256: published.archive_sha256,
      skipped: true,
    });
  });
});
