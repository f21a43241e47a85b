// `nodereg login` on a terminal asks for the token with a hidden prompt; without one it names the
// flag and stdin. The prompt is the real @inquirer password prompt, driven by @inquirer/testing
// through the injectable prompts of RunDeps, so this runs under CI=1 too.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { password } from '@inquirer/prompts';
import { render } from '@inquirer/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Prompts } from '../../src/cli/context.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { runInProcess } from './in-process.js';

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startServer();
  const response = await fetch(`${server.url}/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'erin' }),
  });
  token = ((await response.json()) as { token: string }).token;
});
afterAll(() => server.close());

type Key = string | { name: string; ctrl?: boolean };
/** Prompts whose `password` is the real prompt, answered by `steps` (text typed, or a key). */
function typing(steps: (string | { key: Key })[], screens: string[]): () => Promise<Prompts> {
  const prompts = {
    password: async (config: Parameters<typeof password>[0]) => {
      const { answer, events, getScreen, nextRender } = await render(password, config);
      screens.push(getScreen());
      for (const step of steps) {
        if (typeof step === 'string') events.type(step);
        else {
          events.keypress(step.key);
          await Promise.race([answer.catch(() => {}), nextRender()]);
        }
        screens.push(getScreen());
      }
      return answer;
    },
  };
  return async () => prompts as unknown as Prompts;
}

const profiles = (home: string) => {
  const file = join(home, '.config', 'nodereg', 'config.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).profiles : {};
};

describe('login on a terminal', () => {
  it('asks for the token without echoing it, checks it, saves it', async () => {
    const home = tempDir('nodereg-home-');
    const screens: string[] = [];
    const result = await runInProcess(['--registry', server.url, 'login'], {
      home,
      interactive: true,
      prompts: typing([token, { key: 'enter' }], screens),
    });
    expect(result.code).toBe(0);
    expect(screens[0]).toContain(`Token for ${server.url}`);
    for (const screen of screens) expect(screen).not.toContain(token.slice(0, 10));
    expect(result.stdout).toContain('as erin');
    expect(result.stdout + result.stderr).not.toContain(token);
    expect(profiles(home)).toEqual({ default: { registry: server.url, token } });
  });

  it('refuses an empty answer and asks again', async () => {
    const home = tempDir('nodereg-home-');
    const screens: string[] = [];
    const result = await runInProcess(['--registry', server.url, '--profile', 'p2', 'login'], {
      home,
      interactive: true,
      prompts: typing([{ key: 'enter' }, token, { key: 'enter' }], screens),
    });
    expect(screens.some((s) => s.includes('paste a token'))).toBe(true);
    expect(result.code).toBe(0);
    expect(profiles(home)).toEqual({ p2: { registry: server.url, token } });
  });

  it('a token the registry refuses saves nothing (exit 4)', async () => {
    const home = tempDir('nodereg-home-');
    const result = await runInProcess(['--registry', server.url, 'login'], {
      home,
      interactive: true,
      prompts: typing(['nrg_u_not-a-real-token', { key: 'enter' }], []),
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('nothing was saved');
    expect(profiles(home)).toEqual({});
  });

  it('Ctrl-C exits 130 and saves nothing', async () => {
    const home = tempDir('nodereg-home-');
    const result = await runInProcess(['--registry', server.url, 'login'], {
      home,
      interactive: true,
      prompts: typing(['nrg_u_half', { key: { name: 'c', ctrl: true } }], []),
    });
    expect(result.code).toBe(130);
    expect(profiles(home)).toEqual({});
  });

  it('--token skips the prompt', async () => {
    const home = tempDir('nodereg-home-');
    const never = async (): Promise<Prompts> => {
      throw new Error('prompted although --token was given');
    };
    const result = await runInProcess(['--registry', server.url, '--token', token, 'login'], {
      home,
      interactive: true,
      prompts: never,
    });
    expect(result.code).toBe(0);
    expect(profiles(home).default.token).toBe(token);
  });
});

describe('login without a terminal', () => {
  it('names --token and stdin when neither is given (exit 2), and prompts for nothing', async () => {
    const home = tempDir('nodereg-home-');
    const never = async (): Promise<Prompts> => {
      throw new Error('prompted without a terminal');
    };
    const result = await runInProcess(['--registry', server.url, 'login'], {
      home,
      interactive: false,
      prompts: never,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--token');
    expect(result.stderr).toContain('stdin');
    expect(profiles(home)).toEqual({});
  });

  it('--no-input on a terminal is the same as no terminal', async () => {
    const home = tempDir('nodereg-home-');
    const result = await runInProcess(['--no-input', '--registry', server.url, 'login'], { home, interactive: true });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--token');
  });

  it('reads the token from stdin', async () => {
    const home = tempDir('nodereg-home-');
    const result = await runInProcess(['--registry', server.url, 'login'], {
      home,
      interactive: false,
      input: `  ${token}\n`,
    });
    expect(result.code).toBe(0);
    expect(profiles(home)).toEqual({ default: { registry: server.url, token } });
  });
});
