// The real binary, stdout a pipe, against stand-in servers on 127.0.0.1 that are not a nodereg
// registry, or are one behind a proxy that is down: what the user reads must say so in plain words,
// with the documented exit code, never a TypeError.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers.js';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done).closeAllConnections())));
});

/** A stand-in server on 127.0.0.1 answering every request with `handler`. */
async function stand(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const answer = (status: number, type: string, body: string) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': type });
  res.end(body);
};

describe('a server that is not a registry', () => {
  it.each([
    ['JSON of another shape', '{"status":"ok","user":"x"}', 'application/json'],
    ['null', 'null', 'application/json'],
    ['a web page', '<!doctype html><title>Welcome</title>', 'text/html'],
  ])('answering %s: whoami and login say so, naming the URL (exit 1); login saves nothing', async (_what, body, type) => {
    const url = await stand(answer(200, type, body));
    const home = tempDir('nodereg-home-');
    for (const argv of [['whoami'], ['login', '--no-input'], ['whoami', '--json']]) {
      const result = await runCli([...argv, '--registry', url, '--token', 'nrg_u_test'], { home });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`^error: ${url}/users/me answered HTTP 200 with a body that is not (JSON|the shape of a registry's answer)\\n`));
      expect(result.stderr).toContain('hint: another server answered, not a nodereg registry: check the registry URL');
      expect(result.stderr).not.toMatch(/TypeError|Cannot read properties/);
      if (argv.includes('--json')) expect(JSON.parse(result.stdout).error).toMatchObject({ code: 'bad_answer' });
    }
    expect(existsSync(join(home, '.config', 'nodereg'))).toBe(false);
  });
});

describe('a proxy in front of the registry', () => {
  it('answering its HTML 502 page: the hint says the registry or its proxy is unavailable, not to check the URL', async () => {
    const url = await stand(answer(502, 'text/html', '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>'));
    // a review is a POST, sent once: its answer comes back at once (a GET would be retried for the restart window first)
    const result = await runCli(['review', 'some-node', '--star', '5'], { env: { NODEREG_REGISTRY: url, NODEREG_TOKEN: 'nrg_u_test' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: HTTP 502 Bad Gateway: an HTML page titled "502 Bad Gateway", not a registry\'s answer\n' +
        'hint: the registry, or a proxy in front of it, is unavailable (it may be restarting): try again later\n',
    );
  });
});
