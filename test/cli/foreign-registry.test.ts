// The CLI, in-process, against stand-in servers on 127.0.0.1 that are not a nodereg
// registry, or are one behind a proxy that is down: what the user reads must say so in plain words,
// with the documented exit code, never a TypeError.
import { createHash } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { constants, deflateRawSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { writeTree } from '../package/fixtures.js';
import { runInProcess } from './in-process.js';
import { startServer, tempDir } from '../helpers.js';
import { createPublisher, createUser } from '../server/fixtures.js';

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
  ])(
    'answering %s: whoami and login say so, naming the URL (exit 2); login saves nothing',
    async (_what, body, type) => {
      const url = await stand(answer(200, type, body));
      const home = tempDir('nodereg-home-');
      for (const argv of [['whoami'], ['login', '--no-input'], ['whoami', '--json']]) {
        const result = await runInProcess([...argv, '--registry', url, '--token', 'nrg_u_test'], { home });
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).toMatch(
          new RegExp(
            `^error: ${url} does not answer as a nodereg or Comfy registry: ${url}/users/me answered HTTP 200 with a body that is not (JSON|the shape of a registry's answer)\\n`,
          ),
        );
        expect(result.stderr).toContain(
          "hint: another server answered, or the path is wrong: set the registry's root URL",
        );
        expect(result.stderr).not.toMatch(/TypeError|Cannot read properties/);
        if (argv.includes('--json')) expect(JSON.parse(result.stdout).error).toMatchObject({ code: 'bad_answer' });
      }
      expect(existsSync(join(home, '.config', 'nodereg'))).toBe(false);
    },
  );
});

describe('a registry URL that is not a registry', () => {
  const project = () =>
    writeTree(tempDir('nodereg-project-'), {
      'pyproject.toml':
        '[project]\nname = "image-tools"\nversion = "1.0.0"\ndescription = "x"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "ada"\n',
      'nodes.py': 'print(1)\n',
    });
  const commands = [
    ['publish'],
    ['node', 'show', 'image-tools'],
    ['node', 'search', 'image'],
    ['whoami'],
    ['node', 'download', 'image-tools'],
    ['publisher', 'show', 'ada'],
  ];
  /** Each command against `url` (with a user and password): exit 2, naming the URL masked and where it is set; never "does not exist". */
  async function expectNotARegistry(url: string, answered: RegExp) {
    const withUser = url.replace('http://', 'http://ada:s3cret@');
    const cwd = project();
    for (const argv of commands) {
      const result = await runInProcess(argv, {
        cwd,
        env: { NODEREG_REGISTRY: withUser, NODEREG_TOKEN: 'nrg_u_test' },
      });
      expect(result.code, `${argv.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(
          `^error: http://\\*\\*\\*@${url.slice('http://'.length)} does not answer as a nodereg or Comfy registry: `,
        ),
      );
      expect(result.stderr).toMatch(answered);
      expect(result.stderr).toContain('with --registry or NODEREG_REGISTRY');
      expect(result.stderr).not.toMatch(/s3cret|ada:/);
      expect(result.stderr).not.toMatch(/does not exist|not found/);
    }
  }

  it('our registry under a wrong path (…/api): every command says so, exit 2', async () => {
    const server = await startServer();
    try {
      await expectNotARegistry(`${server.url}/api`, /answered HTTP 404 "no route for (GET|POST) \/api\//);
    } finally {
      await server.close();
    }
  });

  it.each([
    [
      'an HTML 404 page',
      'text/html',
      '<!DOCTYPE html><html><head><title>404 Not Found</title></head><body>nginx</body></html>',
      /answered HTTP 404 with an HTML page titled "404 Not Found"\n/,
    ],
    [
      'a JSON 404 of another shape',
      'application/json',
      '{"detail":"Not Found"}',
      /answered HTTP 404 with a body that is not a registry's error answer\n/,
    ],
  ])('a server answering %s: every command says so, exit 2', async (_what, type, body, answered) => {
    await expectNotARegistry(await stand(answer(404, type, body)), answered);
  });

  // The incumbent registry's error shape is not in the spec: a JSON 404 with a message is taken as a
  // registry's answer about what is missing, not as a wrong URL.
  it('a JSON 404 with a message in another shape keeps its words: exit 5', async () => {
    const url = await stand(answer(404, 'application/json', '{"message":"Node not found"}'));
    const shown = await runInProcess(['node', 'show', 'image-tools'], { env: { NODEREG_REGISTRY: url } });
    expect(shown.code, shown.stderr).toBe(5);
    expect(shown.stderr).toContain('Node not found');
    expect(shown.stderr).not.toContain('does not answer as');
  });

  it("a registry's own 404 keeps its words: a missing publisher (exit 5) and node (exit 5)", async () => {
    const server = await startServer();
    try {
      const env = { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: server.adminToken };
      const published = await runInProcess(['publish'], { cwd: project(), env });
      expect(published.code, published.stderr).toBe(5);
      expect(published.stderr).toMatch(/^error: publisher "ada" does not exist on http:\/\/127\.0\.0\.1:\d+\n/);
      const shown = await runInProcess(['node', 'show', 'image-tools'], { env });
      expect(shown.code, shown.stderr).toBe(5);
      expect(shown.stderr).toMatch(/^error: node image-tools not found\n/);
    } finally {
      await server.close();
    }
  });
});

describe('validate against a URL that is not a registry', () => {
  const project = () =>
    writeTree(tempDir('nodereg-project-'), {
      'pyproject.toml':
        '[project]\nname = "image-tools"\nversion = "1.0.0"\ndescription = "x"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "ada"\n',
      'nodes.py': 'print(1)\n',
    });

  it.each([
    [
      'an HTML 404 page',
      404,
      'text/html',
      '<!DOCTYPE html><html><head><title>404 Not Found</title></head><body>nginx</body></html>',
      /\/nodes\/image-tools answered HTTP 404 with an HTML page titled "404 Not Found"/,
    ],
    [
      'a web page',
      200,
      'text/html',
      '<!doctype html><title>Welcome</title>',
      /\/limits answered HTTP 200 with a body that is not JSON/,
    ],
  ])(
    'answering %s: its own checks report (exit 0), with a warning naming the URL and where it is set',
    async (_what, status, type, body, answered) => {
      const url = await stand(answer(status, type, body));
      for (const json of [false, true]) {
        const result = await runInProcess(['validate', ...(json ? ['--json'] : [])], {
          cwd: project(),
          env: { NODEREG_REGISTRY: url },
        });
        expect(result.code, result.stderr).toBe(0);
        if (json) {
          const doc = JSON.parse(result.stdout);
          expect(doc).toMatchObject({ valid: true, limits_checked: null });
          expect(doc.warnings).toEqual([
            expect.stringMatching(
              new RegExp(
                `^${url} does not answer as a nodereg or Comfy registry: .*the archive was not checked against its limits$`,
              ),
            ),
          ]);
          continue;
        }
        expect(result.stdout).toContain('image-tools 1.0.0 (publisher ada) is ready to publish: 2 files');
        expect(result.stderr).toMatch(
          new RegExp(`^warning: ${url} does not answer as a nodereg or Comfy registry: ${url}`, 'm'),
        );
        expect(result.stderr).toMatch(answered);
        expect(result.stderr).toContain('; the archive was not checked against its limits\n');
        expect(result.stderr).toMatch(
          /^hint: .*with --registry or NODEREG_REGISTRY.*; --offline does not ask the registry$/m,
        );
      }
    },
  );

  it('our registry under a wrong path (…/api): the warning names it', async () => {
    const server = await startServer();
    try {
      const result = await runInProcess(['validate'], {
        cwd: project(),
        env: { NODEREG_REGISTRY: `${server.url}/api` },
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(
        `warning: ${server.url}/api does not answer as a nodereg or Comfy registry: ${server.url}/api/nodes/image-tools answered HTTP 404 "no route for GET /api/nodes/image-tools"`,
      );
      // On the right URL: the publisher is asked for too, and validate is ready once it exists.
      const unknown = await runInProcess(['validate'], { cwd: project(), env: { NODEREG_REGISTRY: server.url } });
      expect(unknown.code).toBe(5);
      expect(unknown.stderr).toContain(`publisher ada does not exist on ${server.url}`);
      const owner = await createUser(server, 'foreign-owner');
      await createPublisher(server, owner, 'ada');
      const right = await runInProcess(['validate'], { cwd: project(), env: { NODEREG_REGISTRY: server.url } });
      expect(right.code, right.stderr).toBe(0);
      expect(right.stdout).toContain(`is ready to publish to ${server.url}:`);
      expect(right.stderr).not.toContain('does not answer');
    } finally {
      await server.close();
    }
  });

  it('a registry without GET /limits (a plain-text 404 there, its JSON on the node route, as a Comfy registry may): no warning', async () => {
    const url = await stand((req, res) => {
      if (req.url!.startsWith('/nodes/'))
        return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Node not found"}');
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n');
    });
    const result = await runInProcess(['validate'], { cwd: project(), env: { NODEREG_REGISTRY: url } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('is ready to publish: 2 files');
    expect(result.stderr).not.toMatch(/does not answer|warning/);
  });
});

describe('a proxy in front of the registry', () => {
  it('answering its HTML 502 page: the hint says the registry or its proxy is unavailable, not to check the URL', async () => {
    const url = await stand(
      answer(
        502,
        'text/html',
        '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>',
      ),
    );
    // a review is a POST, sent once: its answer comes back at once (a GET would be retried for the restart window first)
    const result = await runInProcess(['review', 'some-node', '--star', '5'], {
      env: { NODEREG_REGISTRY: url, NODEREG_TOKEN: 'nrg_u_test' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: HTTP 502 Bad Gateway: an HTML page titled "502 Bad Gateway", not a registry\'s answer\n' +
        'hint: the registry, or a proxy in front of it, is unavailable (it may be restarting): try again later\n',
    );
  });
});

/**
 * A zip of one entry `bomb.bin` whose deflated data inflates to `inflates` bytes of zeros, while its
 * headers declare `declares` (a lie when they differ): 1 MiB of zeros deflated once and repeated,
 * so 2 GiB cost ~2 MB and no time to build. The CRC is not that of the data: a check that reads it
 * has inflated everything already.
 */
function zipBomb(inflates: number, declares = inflates): Buffer {
  const piece = deflateRawSync(Buffer.alloc(1024 * 1024), { finishFlush: constants.Z_SYNC_FLUSH });
  const data = Buffer.concat([
    ...Array.from({ length: inflates / (1024 * 1024) }, () => piece),
    deflateRawSync(Buffer.alloc(0)),
  ]);
  const name = Buffer.from('bomb.bin');
  // [offset, value] of 16-bit fields, then of 32-bit ones (zip's local header, central header, end record)
  const record = (size: number, short: [number, number][], long: [number, number][]) => {
    const bytes = Buffer.alloc(size);
    for (const [at, value] of short) bytes.writeUInt16LE(value, at);
    for (const [at, value] of long) bytes.writeUInt32LE(value, at);
    return bytes;
  };
  const local = record(
    30,
    [
      [4, 20],
      [8, 8],
      [26, name.length],
    ],
    [
      [0, 0x04034b50],
      [18, data.length],
      [22, declares],
    ],
  ); // 8: deflate
  const central = record(
    46,
    [
      [4, 20],
      [6, 20],
      [10, 8],
      [28, name.length],
    ],
    [
      [0, 0x02014b50],
      [20, data.length],
      [24, declares],
    ],
  );
  const end = record(
    22,
    [
      [8, 1],
      [10, 1],
    ],
    [
      [0, 0x06054b50],
      [12, central.length + name.length],
      [16, local.length + name.length + data.length],
    ],
  );
  return Buffer.concat([local, name, data, central, name, end]);
}

/** A registry whose one version's archive is `archive`, announced with its true size and SHA-256. */
const registryServing = (archive: Buffer) =>
  stand((req, res) => {
    if (req.url!.startsWith('/archives/'))
      return void res.writeHead(200, { 'content-type': 'application/zip' }).end(archive);
    const base = `http://${req.headers.host}`;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'v',
        node_id: 'bomb',
        version: '1.0.0',
        status: 'NodeVersionStatusActive',
        downloadUrl: `${base}/archives/p/bomb/1.0.0/node.zip`,
        archive_size: archive.length,
        archive_sha256: createHash('sha256').update(archive).digest('hex'),
      }),
    );
  });

describe('node download of a zip bomb', () => {
  it.each([
    [
      'declaring its 2 GiB',
      2 * 1024 ** 3,
      2 * 1024 ** 3,
      /expands to more than 1\.0 GiB \(at entry "bomb\.bin"\), more than a registry takes: refused without inflating it\n/,
    ],
    ['declaring 1 MiB of its 64 MiB', 64 * 1024 ** 2, 1024 ** 2, /too many bytes|expected/],
  ])(
    '%s: refused (exit 1) without inflating it whole, and nothing is left on disk',
    { timeout: 60_000 },
    async (_what, inflates, declares, reason) => {
      const url = await registryServing(zipBomb(inflates, declares));
      const out = tempDir('nodereg-bomb-');
      const result = await runInProcess(['node', 'download', 'bomb', '--out', join(out, 'bomb.zip')], {
        env: { NODEREG_REGISTRY: url },
      });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/^error: the downloaded file is not a readable zip: /);
      expect(result.stderr).toMatch(reason);
      expect(readdirSync(out)).toEqual([]);
    },
  );
});

describe('colour codes in a registry text', () => {
  const sgr = (code: string) => `\x1b[${code}m`;
  /** A node whose name and description style themselves: red, dim, then reset, as a hostile registry may send. */
  const styledNode = (req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url!.startsWith('/nodes/shiny/versions')) return void res.end('[]');
    res.end(
      JSON.stringify({
        id: 'shiny',
        name: `${sgr('32')}verified${sgr('39')}`,
        description: `${sgr('31')}red${sgr('2')} dim${sgr('22')}`,
        status: 'NodeStatusActive',
      }),
    );
  };

  it.each<[string, Record<string, string | undefined>]>([
    ['a pipe, no colour', { NO_COLOR: '1' }],
    ['colours forced on', { NO_COLOR: undefined, FORCE_COLOR: '1' }],
  ])('are written escaped (%s); only the styles of the CLI itself reach the terminal', async (_what, colour) => {
    const url = await stand(styledNode);
    const shown = await runInProcess(['node', 'show', 'shiny'], { env: { NODEREG_REGISTRY: url, ...colour } });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('\\x1b[32mverified\\x1b[39m');
    expect(shown.stdout).toContain('\\x1b[31mred\\x1b[2m dim\\x1b[22m');
    // what is left raw is ours: bold around the title, green around "active"; nothing without FORCE_COLOR
    const raw = shown.stdout.match(/\x1b\[\d+m/g) ?? [];
    expect(raw).toEqual(colour.FORCE_COLOR ? [sgr('1'), sgr('22'), sgr('32'), sgr('39')] : []);
  });
});
