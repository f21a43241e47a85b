// A URL's user and password (`http://user:pass@host`, a registry behind basic auth; a PostgreSQL URL;
// a token as the user of `http://TOKEN@host`) are never printed: not in errors, hints, --verbose
// request lines, --json documents, config listings or serve's log; the URL shows `***@`. The CLI runs
// in-process; every registry is on 127.0.0.1.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from './in-process.js';
import { startServer, tempDir, type CliResult, type TestServer } from '../helpers.js';

const password = `pw-${randomBytes(6).toString('hex')}`;
const withPassword = (url: string) => url.replace('http://', `http://ada:${password}@`);
const masked = (url: string) => url.replace('http://', 'http://***@');

/** Neither stream holds the password or the user; `shown` (the URL as it may be printed) is on one of them. */
function expectMasked(result: CliResult, shown: string) {
  expect(result.stdout + result.stderr).not.toContain(password);
  expect(result.stdout + result.stderr).not.toContain('ada:');
  expect(result.stdout + result.stderr).toContain(shown);
}

let server: TestServer;
let foreign: http.Server;
let foreignUrl: string;
beforeAll(async () => {
  server = await startServer();
  // Not a registry: a page, as a captive portal or a wrong URL answers.
  foreign = http.createServer((req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html>sign in</html>'),
  );
  await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
  foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await server.close();
  foreign.close();
});

describe('a registry URL with a password', () => {
  const refused = 'http://127.0.0.1:9';

  it('--registry, unreachable: the error and hint, with --json and with --verbose, show ***@', async () => {
    for (const extra of [[], ['--json'], ['--verbose']]) {
      const result = await runInProcess([...extra, '--registry', withPassword(refused), 'node', 'show', 'some-node']);
      expect(result.code).toBe(1);
      expectMasked(result, `cannot reach ${masked(refused)}/nodes/some-node`);
      if (extra[0] === '--json') expect(JSON.parse(result.stdout).error.message).toContain(masked(refused));
    }
  });

  it('NODEREG_REGISTRY: --verbose request lines, "no token for" and a foreign answer show ***@', async () => {
    const env = { NODEREG_REGISTRY: withPassword(server.url) };
    const search = await runInProcess(['--verbose', 'node', 'search', 'x'], { env });
    expect(search.code).toBe(0);
    expectMasked(search, `GET ${masked(server.url)}/nodes/search`);
    const whoami = await runInProcess(['whoami'], { env });
    expect(whoami.code).toBe(4);
    expectMasked(whoami, `no token for ${masked(server.url)}`);
    const foreignAnswer = await runInProcess(['--json', 'node', 'show', 'some-node'], {
      env: { NODEREG_REGISTRY: withPassword(foreignUrl) },
    });
    expect(foreignAnswer.code).toBe(2);
    expectMasked(foreignAnswer, masked(foreignUrl));
  });

  it('a profile: config set, get and list (also --json) and the commands using it show ***@', async () => {
    const home = tempDir('nodereg-home-');
    const set = await runInProcess(['config', 'set', 'registry', withPassword(server.url)], { home });
    expect(set.code).toBe(0);
    expectMasked(set, masked(server.url));
    for (const args of [
      ['config', 'get', 'registry'],
      ['config', 'list'],
      ['--json', 'config', 'list'],
    ]) {
      const result = await runInProcess(args, { home });
      expect(result.code).toBe(0);
      expectMasked(result, masked(server.url));
    }
    const refusedToken = await runInProcess(['--json', '--token', 'nrg_u_unknown', 'login', '--no-input'], { home });
    expect(refusedToken.code).toBe(4);
    expect(refusedToken.stdout + refusedToken.stderr).not.toContain(password);
    const verbose = await runInProcess(['--verbose', '--token', 'nrg_u_unknown', 'whoami'], { home });
    expect(verbose.code).toBe(4);
    expectMasked(verbose, `GET ${masked(server.url)}/users/me`);
  });

  it('a token as the user of the URL (no password): --verbose lines and errors show ***@', async () => {
    const token = `ghp_${randomBytes(8).toString('hex')}`;
    const registry = server.url.replace('http://', `http://${token}@`);
    const search = await runInProcess(['--verbose', '--registry', registry, 'node', 'search', 'x']);
    expect(search.code).toBe(0);
    const refused = await runInProcess([
      '--json',
      '--registry',
      'http://127.0.0.1:9'.replace('http://', `http://${token}@`),
      'node',
      'show',
      'x',
    ]);
    expect(refused.code).toBe(1);
    for (const result of [search, refused]) expect(result.stdout + result.stderr).not.toContain(token);
    expect(search.stderr).toContain(`GET ${masked(server.url)}/nodes/search`);
    expect(JSON.parse(refused.stdout).error.message).toContain('cannot reach http://***@127.0.0.1:9/nodes/x');
  });

  it('an unknown command that is such a URL is echoed masked, also as --json', async () => {
    const result = await runInProcess(['--json', withPassword(foreignUrl)]);
    expect(result.code).toBe(2);
    expectMasked(result, masked(foreignUrl));
    expect(JSON.parse(result.stdout).error.message).toContain(masked(foreignUrl));
  });
});

describe('serve and a PostgreSQL URL with a password', () => {
  it('--database (and NODEREG_DATABASE_URL), with --log json: the error line shows ***@', async () => {
    const database = `postgres://ada:${password}@127.0.0.1:1/db`;
    const dataDir = join(tempDir(), 'data');
    for (const run of [
      { args: ['--database', database], env: {} },
      { args: [], env: { NODEREG_DATABASE_URL: database } },
    ]) {
      const result = await runInProcess(['serve', '--port', '0', '--data-dir', dataDir, '--log', 'json', ...run.args], {
        env: run.env,
      });
      expect(result.code).toBe(1);
      expect(result.stdout + result.stderr).not.toContain(password);
      expect(JSON.parse(result.stderr.trim().split('\n').at(-1)!).message).toContain('postgres://***@127.0.0.1:1/db');
      expect(result.stdout + result.stderr).not.toContain('ada');
    }
  });

  it('a password in the query (?password=, as PostgreSQL reads it) is not printed either: it shows ***', async () => {
    const database = `postgres://127.0.0.1:1/db?sslmode=disable&password=${password}&application_name=x`;
    const dataDir = join(tempDir(), 'data');
    const result = await runInProcess(['serve', '--port', '0', '--data-dir', dataDir, '--database', database]);
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).not.toContain(password);
    expect(result.stderr).toContain('postgres://127.0.0.1:1/db?sslmode=disable&password=***&application_name=x');
  });
});
