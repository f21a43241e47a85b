// Typed errors and exit codes (DESIGN.md §5), the checks of a command's input before anything is
// sent, and the client's errors while sending.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CliError, EXIT, exitCodeForStatus, flagForField, toCliError } from '../../src/cli/errors.js';
import { validateBody } from '../../src/cli/ai-tasks.js';
import { precheck } from '../../src/cli/resolve.js';
import { ApiError, NetworkError, createClient, routes } from '../../src/client/index.js';
import { runInProcess } from './in-process.js';

describe('exit codes', () => {
  it('EXIT has the values of DESIGN.md §5', () => {
    expect(EXIT).toEqual({
      ok: 0,
      failure: 1,
      invalid: 2,
      conflict: 3,
      auth: 4,
      notFound: 5,
      interrupted: 130,
      terminated: 143,
    });
  });

  it.each([
    [400, 2],
    [413, 2],
    [415, 2],
    [401, 4],
    [403, 4],
    [404, 5],
    [409, 3],
    [429, 1],
    [500, 1],
    [502, 1],
    [503, 1],
    [504, 1],
    [408, 1],
  ])('status %s exits %s', (status, code) => {
    expect(exitCodeForStatus(status)).toBe(code);
  });

  it.each([
    [400, 'invalid_request', 2],
    [413, 'payload_too_large', 2],
    [415, 'unsupported_media_type', 2],
    [401, 'unauthorized', 4],
    [403, 'forbidden', 4],
    [403, 'banned', 4],
    [404, 'not_found', 5],
    [409, 'conflict', 3],
    [429, 'rate_limited', 1],
    [500, 'internal', 1],
    [502, 'upstream_error', 1],
  ])('ApiError %s %s becomes a CliError exiting %s', (status, code, exit) => {
    const error = toCliError(new ApiError(status, code, `server said ${code}`));
    expect(error).toBeInstanceOf(CliError);
    expect(error.exitCode).toBe(exit);
    expect(error.code).toBe(code);
    expect(error.status).toBe(status);
    expect(error.message).toContain(`server said ${code}`);
  });
});

describe('toCliError', () => {
  it('401 carries a hint on how to set a token', () => {
    const error = toCliError(new ApiError(401, 'unauthorized', 'no token'));
    expect(error.hint).toMatch(/NODEREG_TOKEN/);
  });

  it('a command hint for a status wins over the default, the server hint over the default', () => {
    expect(toCliError(new ApiError(409, 'conflict', 'exists'), { 409: 'bump the version' }).hint).toBe(
      'bump the version',
    );
    expect(toCliError(new ApiError(401, 'unauthorized', 'x', 'server hint')).hint).toBe('server hint');
  });

  it('429 with Retry-After says when to try again', () => {
    const error = toCliError(new ApiError(429, 'rate_limited', 'slow down', undefined, undefined, '7'));
    expect(error.exitCode).toBe(1);
    expect(error.hint).toContain('7');
  });

  it('server field errors are listed in the message', () => {
    const error = toCliError(
      new ApiError(400, 'invalid_request', 'invalid body', undefined, [{ path: 'star', message: 'Too big' }]),
    );
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain('star: Too big');
  });

  it('a NetworkError exits 1 and names the URL', () => {
    const error = toCliError(new NetworkError('http://127.0.0.1:4880/nodes', 'ECONNREFUSED'));
    expect(error.exitCode).toBe(1);
    expect(error.code).toBe('network');
    expect(error.message).toContain('http://127.0.0.1:4880/nodes');
    expect(error.hint).toBeTruthy();
  });

  it('a request that timed out exits 1 with a hint on the wait, not on the URL', () => {
    const error = toCliError(new NetworkError('http://127.0.0.1:4880/nodes/a', 'no answer in time'));
    expect(error.exitCode).toBe(1);
    expect(error.hint).toBe(
      'the registry, or a proxy in front of it, gave no whole answer within 30 s (a request that timed out is not sent again): try again later',
    );
  });

  it('a CliError passes through unchanged', () => {
    const original = new CliError('kept', 3, 'conflict', 'hint');
    expect(toCliError(original)).toBe(original);
  });

  it('an interrupted prompt exits 130', () => {
    const prompt = Object.assign(new Error('User force closed the prompt'), { name: 'ExitPromptError' });
    expect(toCliError(prompt).exitCode).toBe(130);
  });

  it('anything else exits 1', () => {
    expect(toCliError(new Error('boom'))).toMatchObject({ exitCode: 1, message: 'boom' });
    expect(toCliError('text')).toMatchObject({ exitCode: 1, message: 'text' });
  });
});

describe('flagForField', () => {
  it.each([
    ['light_transfer_strength', '--light-transfer-strength'],
    ['sharpen', '--sharpen'],
    ['smart_grain', '--smart-grain'],
    ['advanced_settings.whites', '--whites'],
    ['images.0', '--images'],
    ['star', '--star'],
  ])('%s → %s', (path, flag) => {
    expect(flagForField(path)).toBe(flag);
  });
});

/** A loopback port that nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("a command's input is checked before anything is sent", () => {
  it.each(['0', '6', '2.5', 'abc'])('review --star %j: exit 2 naming --star, and no request', async (star) => {
    const registry = `http://127.0.0.1:${await closedPort()}`;
    const result = await runInProcess(['review', 'my-node', '--star', star], {
      env: { NODEREG_REGISTRY: registry, NODEREG_TOKEN: 'nrg_u_test' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--star (star)');
    expect(result.stderr).not.toContain('cannot reach');
  });

  it('an invalid relight body names the field to fix, exit 2', async () => {
    const check = validateBody(
      routes.relightImage,
      { image: 'aGk=', light_transfer_strength: 101 },
      { image: '<image>' },
    );
    await expect(check).rejects.toThrow(
      expect.objectContaining({ exitCode: 2, message: expect.stringContaining('--light-transfer-strength') }),
    );
  });

  it('an empty nodeId path parameter is refused, exit 2', async () => {
    await expect(precheck(routes.addReview, { params: { nodeId: '' }, query: { star: '3' } })).rejects.toThrow(
      expect.objectContaining({ exitCode: 2 }),
    );
  });

  it('what is sent is what the schema outputs: its defaults filled in', async () => {
    expect(await precheck(routes.addReview, { query: { star: '4' } })).toEqual({ query: { star: 4 } });
    expect(await validateBody(routes.relightImage, { image: 'aGk=' })).toMatchObject({
      image: 'aGk=',
      style: expect.any(String),
      change_background: expect.any(Boolean),
    });
  });
});

describe('client', () => {
  it('a valid request to a closed loopback port gives a NetworkError naming the URL', async () => {
    const port = await closedPort();
    const base = `http://127.0.0.1:${port}`;
    const client = createClient({ baseUrl: base, retries: 0, timeoutMs: 5000 });
    const error = await client
      .call(routes.addReview, { params: { nodeId: 'my-node' }, query: { star: '4' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).url).toBe(`${base}/nodes/my-node/reviews?star=4`);
    expect((error as NetworkError).message).toContain(`${base}/nodes/my-node/reviews`);
    const cli = toCliError(error);
    expect(cli.exitCode).toBe(1);
    expect(cli.message).toContain(base);
  });

  it('a GET to a closed loopback port also gives a NetworkError naming the URL', async () => {
    const port = await closedPort();
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}/`, retries: 0, timeoutMs: 5000 });
    const error = await client.call(routes.health).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).url).toBe(`http://127.0.0.1:${port}/healthz`);
  });
});

describe('client.download', () => {
  it('sends the token to the registry, and never to another origin', async () => {
    const seen: (string | undefined)[] = [];
    const server = (await import('node:http')).createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.end('zip');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as import('node:net').AddressInfo;
    try {
      const registry = createClient({ baseUrl: `http://127.0.0.1:${port}`, token: 'nrg_u_secret', retries: 0 });
      await (await registry.download(`http://127.0.0.1:${port}/archives/a.zip`)).text();
      // same host, another origin (the name differs): no token
      await (await registry.download(`http://localhost:${port}/elsewhere.zip`)).text();
      expect(seen).toEqual(['Bearer nrg_u_secret', undefined]);
    } finally {
      server.close();
    }
  });
});
