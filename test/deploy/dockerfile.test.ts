// The container recipe (Dockerfile at the root): no hadolint in Debian's archive and a build is too slow for
// the suite, so its instructions are read and their properties asserted, and its HEALTHCHECK command is run
// as written against a real registry: 0 while the registry answers, non-zero once it is gone.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PORT } from '../../src/shared/tuning.js';
import { startServer } from '../helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined and comments dropped, grouped by stage (FROM). */
function stages(text: string): Instruction[][] {
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  const result: Instruction[][] = [];
  for (const line of lines) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(trimmed)!;
    const instruction = { keyword: keyword.toUpperCase(), args: args.replace(/\s+/g, ' ') };
    if (instruction.keyword === 'FROM') result.push([]);
    result.at(-1)!.push(instruction);
  }
  return result;
}

const all = stages(readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8'));
const build = all[0];
const runtime = all.at(-1)!;
const args = (stage: Instruction[], keyword: string) => stage.filter((i) => i.keyword === keyword).map((i) => i.args);
/** An exec-form instruction's argv (a JSON array after any --options). */
const execForm = (value: string) => JSON.parse(value.slice(value.indexOf('['))) as string[];

describe('the Dockerfile', () => {
  it('builds in one stage and runs the production dependencies in another', () => {
    expect(all.length).toBe(2);
    expect(build[0].args).toMatch(/ AS build$/);
    const runs = args(build, 'RUN').join('\n');
    expect(runs).toMatch(/npm ci /);
    expect(runs).toMatch(/npm run build/);
    expect(runs).toMatch(/npm prune --omit=dev/);
    const copied = args(runtime, 'COPY');
    expect(copied.every((copy) => copy.startsWith('--from=build '))).toBe(true);
    expect(copied.some((copy) => copy.includes('/src/dist '))).toBe(true);
  });

  it('runs as a user that is not root, with the data dir as a volume and the default port exposed', () => {
    const users = args(runtime, 'USER');
    expect(users.length).toBe(1);
    expect(users[0]).not.toMatch(/^(root|0)(:|$)/);
    // USER comes before the command, so nothing after it runs as root
    expect(runtime.findIndex((i) => i.keyword === 'USER')).toBeLessThan(runtime.findIndex((i) => i.keyword === 'CMD'));
    expect(args(runtime, 'VOLUME')).toEqual(['/data']);
    expect(args(runtime, 'EXPOSE')).toEqual([String(DEFAULT_PORT)]);
  });

  it('serves on every interface with its data in the volume', () => {
    expect(args(runtime, 'CMD').map(execForm)).toEqual([
      ['nodereg', 'serve', '--host', '0.0.0.0', '--data-dir', '/data'],
    ]);
  });

  it('checks its health with node on /healthz at the default port', () => {
    const [check] = args(runtime, 'HEALTHCHECK');
    expect(check).toMatch(/^--interval=\S+ --timeout=\S+ .*CMD \[/);
    const argv = execForm(check);
    expect(argv[0]).toBe('node');
    expect(argv.join(' ')).toContain(`http://127.0.0.1:${DEFAULT_PORT}/healthz`);
  });

  it('its HEALTHCHECK command exits 0 while the registry answers and non-zero once it is gone', async () => {
    const [node, ...rest] = execForm(args(runtime, 'HEALTHCHECK')[0]);
    expect(node).toBe('node');
    const server = await startServer();
    const check = () =>
      promisify(execFile)(process.execPath, rest, {
        env: { PATH: process.env.PATH ?? '', NODEREG_HEALTHCHECK_URL: `${server.url}/healthz` },
      }).then(
        () => 0,
        (error: { code?: number }) => error.code ?? -1,
      );
    expect(await check()).toBe(0);
    await server.close();
    expect(await check()).not.toBe(0);
  });
});
