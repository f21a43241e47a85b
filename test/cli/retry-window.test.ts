// --retry-window and NODEREG_RETRY_WINDOW: how long a registry that restarts is waited for. Parsed
// here in-process; test/cli/retry-window-waits.test.ts runs the binary against a registry that is not there yet.
import { describe, expect, it } from 'vitest';
import { Ctx, type Globals } from '../../src/cli/context.js';
import { RESTART_WINDOW_MS } from '../../src/shared/tuning.js';
import { writeTree } from '../package/fixtures.js';
import { tempDir } from '../helpers.js';
import { closedPort, runInProcess } from './in-process.js';

const windowOf = (globals: Partial<Globals>, env: Record<string, string> = {}) =>
  new Ctx(() => ({ input: true, ...globals }), '0.0.0-test', { env }).retryWindow();

describe('the retry window setting', () => {
  it.each([
    // unset: 15 s, as README says (test/publish/ci-exit-codes.test.ts shows a 6 s restart waited for with it)
    [{}, {}, { ms: 15_000, chosen: false }],
    [{}, { NODEREG_RETRY_WINDOW: '' }, { ms: RESTART_WINDOW_MS, chosen: false }], // a CI variable that is not defined arrives empty
    [{}, { NODEREG_RETRY_WINDOW: ' 2m\n' }, { ms: 120_000, chosen: true }],
    [{ retryWindow: '0' }, {}, { ms: 0, chosen: true }],
    [{ retryWindow: '30' }, {}, { ms: 30_000, chosen: true }], // a bare number is seconds
    [{ retryWindow: '1.5s' }, {}, { ms: 1_500, chosen: true }],
    [{ retryWindow: '250ms' }, {}, { ms: 250, chosen: true }],
    [{ retryWindow: '1h' }, {}, { ms: 3_600_000, chosen: true }],
    [{ retryWindow: '15s' }, {}, { ms: RESTART_WINDOW_MS, chosen: true }],
    [{ retryWindow: '0' }, { NODEREG_RETRY_WINDOW: '10m' }, { ms: 0, chosen: true }], // the flag wins
    [{ retryWindow: '5s' }, { NODEREG_RETRY_WINDOW: 'soon' }, { ms: 5_000, chosen: true }], // a bad variable the flag replaces is not read
  ])('%j with env %j', (globals, env, expected) => {
    expect(windowOf(globals, env)).toMatchObject(expected);
  });

  it.each([
    [{ retryWindow: 'soon' }, {}, 'invalid --retry-window "soon"'],
    [{ retryWindow: '' }, {}, 'invalid --retry-window ""'],
    [{ retryWindow: '-1s' }, {}, 'invalid --retry-window "-1s"'],
    [{ retryWindow: '5 min' }, {}, 'invalid --retry-window "5 min"'],
    [{ retryWindow: '61m' }, {}, '--retry-window "61m" is longer than 1h, the most it may be'],
    [{}, { NODEREG_RETRY_WINDOW: '2w' }, 'invalid NODEREG_RETRY_WINDOW "2w"'],
    [{}, { NODEREG_RETRY_WINDOW: '2h' }, 'NODEREG_RETRY_WINDOW "2h" is longer than 1h, the most it may be'],
  ])('%j with env %j is refused: %s', (globals, env, message) => {
    expect(() => windowOf(globals, env)).toThrow(expect.objectContaining({ message, exitCode: 2 }));
  });

  it('is a global option, taken before or after the command', async () => {
    const registry = `http://127.0.0.1:${await closedPort()}`;
    for (const argv of [
      ['--retry-window', 'soon', 'node', 'show', 'a'],
      ['node', 'show', 'a', '--retry-window=soon'],
    ]) {
      const result = await runInProcess(argv, { env: { NODEREG_REGISTRY: registry } });
      expect(result).toMatchObject({ code: 2, stderr: expect.stringContaining('invalid --retry-window "soon"') });
    }
  });

  it('a bad value is exit 2 naming the flag, before any request (node show) or any packing (publish)', async () => {
    const registry = `http://127.0.0.1:${await closedPort()}`;
    const dir = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "waiting-node"\nversion = "1.0.0"\n\n[tool.nodereg]\npublisher = "team"\n',
      '__init__.py': '',
    });
    const runs = [
      ['node', 'show', 'a-node', '--retry-window', '90 s'],
      ['publish', dir, '--retry-window', '90 s'],
      ['node', 'versions', 'a-node', '--retry-window', '90 s', '--json'],
    ];
    for (const argv of runs) {
      const result = await runInProcess(argv, { env: { NODEREG_REGISTRY: registry, NODEREG_TOKEN: 'nrg_u_test' } });
      expect([argv[0], result.code]).toEqual([argv[0], 2]);
      expect(result.stderr).toBe(
        'error: invalid --retry-window "90 s"\nhint: write a duration like 500ms, 90s, 20m or 1h\n',
      );
    }
    const fromEnv = await runInProcess(['node', 'show', 'a-node'], {
      env: { NODEREG_REGISTRY: registry, NODEREG_RETRY_WINDOW: '3h' },
    });
    expect(fromEnv).toMatchObject({
      code: 2,
      stderr:
        'error: NODEREG_RETRY_WINDOW "3h" is longer than 1h, the most it may be\nhint: write a shorter one, such as 5m\n',
    });
  });

  it('--help lists it under Global Options, with its variable and default', async () => {
    const help = (await runInProcess(['publish', '--help'])).stdout;
    expect(help.slice(help.indexOf('Global Options:')).replace(/\s+/g, ' ')).toContain(
      '--retry-window <duration> how long to wait for a registry that is restarting or refusing connections, e.g. 5m; 0 fails at once (env NODEREG_RETRY_WINDOW, default 15s)',
    );
  });
});
