// Waiting for AI tasks on a terminal, in-process against a real registry in sandbox mode: the
// spinner (ora) path, a terminal without a width, and Ctrl-C while the spinner runs.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/program.js';
import { checkHints } from '../cli/hint-check.js';
import { PNG, startServer, tempDir, type TestServer } from '../helpers.js';

/** A stream that says it is a terminal of the given width. */
function terminal(columns: number) {
  const s = {
    buf: '',
    isTTY: true,
    columns,
    write: (chunk: string | Uint8Array) => ((s.buf += String(chunk)), true),
    // what a tty.WriteStream offers and ora uses to redraw
    cursorTo: () => true,
    moveCursor: () => true,
    clearLine: () => true,
    clearScreenDown: () => true,
  };
  return s;
}

let dir: string;
let image: string;

async function cli(server: TestServer, token: string, argv: string[], stderr = terminal(80)) {
  const stdout = { buf: '', write: (chunk: string) => ((stdout.buf += chunk), true) };
  const code = await run(argv, '0.0.0-test', {
    // no CI: a terminal on stderr may animate
    env: {
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, 'cfg'),
      NO_COLOR: '1',
      NODEREG_REGISTRY: server.url,
      NODEREG_TOKEN: token,
    },
    stdout,
    stderr,
    stdin: Readable.from([]),
    interactive: false,
  });
  await checkHints(stdout.buf, stderr.buf);
  return { code, stdout: stdout.buf, stderr: stderr.buf };
}

async function userToken(server: TestServer): Promise<string> {
  const response = await fetch(`${server.url}/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'alice' }),
  });
  return ((await response.json()) as { token: string }).token;
}

beforeAll(() => {
  dir = tempDir('nodereg-cli-wait-');
  image = join(dir, 'photo.png');
  writeFileSync(image, PNG);
});

describe('on a terminal', () => {
  let server: TestServer;
  let token: string;
  beforeAll(async () => {
    server = await startServer({ proxy: { sandboxDelay: 300 } });
    token = await userToken(server);
  });
  afterAll(() => server.close());

  it('shows a spinner while waiting, then saves the result', async () => {
    const out = join(dir, 'spun.png');
    const result = await cli(server, token, ['relight', image, '--output', out]);
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(out).equals(PNG)).toBe(true);
    // ora's frames: braille dots, or `- \ | /` where the terminal may lack Unicode (TERM=linux)
    expect(result.stderr).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏\-\\|/] relight task/);
    expect(result.stderr).not.toMatch(/\n[^\n]*: IN_PROGRESS\n/); // no plain status lines
  });

  it('a terminal without a width gets plain status lines instead', async () => {
    const result = await cli(server, token, ['relight', image, '--wait'], terminal(0));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/relight task [\w-]+: COMPLETED\n/);
    expect(result.stderr).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
  });
});

describe('Ctrl-C while the spinner runs', () => {
  let server: TestServer;
  let token: string;
  beforeAll(async () => {
    server = await startServer({ proxy: { sandboxDelay: 600_000 } });
    token = await userToken(server);
  });
  afterAll(() => server.close());

  it('stops waiting with exit 130 and names the task, which keeps running', async () => {
    const stderr = terminal(80);
    const pending = cli(server, token, ['relight', image, '--wait'], stderr);
    for (let i = 0; i < 500 && !/: CREATED/.test(stderr.buf); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    process.emit('SIGINT');
    const result = await pending;
    expect(result.code).toBe(130);
    const id = /relight task ([0-9a-f-]{36})/.exec(result.stderr)?.[1];
    expect(result.stderr).toContain(`stopped waiting; relight task ${id} keeps running`);
    expect(result.stderr).toContain(`nodereg task status relight ${id} --wait`);
    expect(process.listeners('SIGINT').length).toBeLessThanOrEqual(1); // ours is gone (ora's restorer may stay)
  });
});
