// Wrong values are refused alike by the CLI's flags, `validate` and the server (the rules live in the
// contract), before any request, in sentences that name the flag or key, the rule and an example.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';
import { countingServer, runInProcess } from './in-process.js';

let server: Awaited<ReturnType<typeof countingServer>>;
beforeAll(async () => {
  server = await countingServer();
});
afterAll(() => server.close());

const run = (argv: string[]) => runInProcess(['--registry', server.url, '--token', 'nrg_u_test', ...argv]);

describe('flags', () => {
  it.each([
    [['review', 'my-node', '--star', '3.5'], '--star (star): must be a whole number (no decimals), such as 3'],
    [
      ['video-extend', '--model', 'vidq2-turbo', '--duration', '2.5'],
      '--duration (duration): must be a whole number (no decimals), such as 3',
    ],
    [
      ['node', 'update', 'my-node', '--icon', 'icon.png'],
      '--icon (icon): must be an absolute http:// or https:// URL, such as https://example.com/page (or "" for none)',
    ],
    [
      ['node', 'update', 'my-node', '--repository', 'not a url'],
      '--repository (repository): must be an absolute http:// or https:// URL',
    ],
    [
      ['node', 'update', 'my-node', '--requires-app', 'banana'],
      '--requires-app (supported_appui_version): must be a version range such as >=1.0.0',
    ],
    [
      ['node', 'update', 'my-node', '--tags', Array.from({ length: 65 }, (_, i) => `t${i}`).join(',')],
      '--tags (tags): must have at most 64 items',
    ],
    [
      ['publisher', 'update', 'acme', '--website', 'notaurl'],
      '--website (website): must be an absolute http:// or https:// URL',
    ],
  ])('nodereg %j says %s and sends nothing', async (argv, sentence) => {
    const before = server.count();
    const result = await run(argv);
    expect(result.stderr).toContain(sentence);
    expect(result.stderr).not.toMatch(/Invalid input|expected \w+, received/);
    expect(result.code).toBe(2);
    expect(server.count()).toBe(before);
  });

  it('takes an http(s) URL, a version range, and "" to clear (no error before the request)', async () => {
    const before = server.count();
    const result = await run([
      'node',
      'update',
      'my-node',
      '--publisher',
      'acme',
      '--icon',
      'https://example.com/i.png',
      '--requires-app',
      '>=0.3.0,<1.0',
      '--banner-url',
      '',
    ]);
    expect(result.stderr).not.toMatch(/invalid --/);
    expect(server.count()).toBeGreaterThan(before); // it got as far as sending
  });
});

describe('validate', () => {
  it('names the pyproject key, the rule and an example for each wrong value', async () => {
    const dir = writeTree(tempDir(), {
      'pyproject.toml': `[project]
name = "my-node"
version = "1.0.0"
[project.urls]
Repository = "not a url"
[tool.nodereg]
publisher = "acme"
tags = "image"
icon = "icon.png"
requires-app = "banana"
`,
      '__init__.py': '',
    });
    const result = await runInProcess(['validate', dir]);
    expect(result.code).toBe(2);
    for (const line of [
      '[tool.nodereg] tags: must be a list, such as ["first", "second"]',
      '[tool.nodereg] icon: must be an absolute http:// or https:// URL, such as https://example.com/page (or "" for none)',
      '[tool.nodereg] requires-app: must be a version range such as >=1.0.0 or >=1.0.0 <2.0.0 (or "" for none)',
      '[project.urls] Repository: must be an absolute http:// or https:// URL',
    ]) {
      expect(result.stderr).toContain(line);
    }
    expect(result.stderr).not.toMatch(/Invalid input|expected \w+, received/);
  });
});

describe('other raw messages, now in plain words (exit 2, nothing sent)', () => {
  it('a registry that is not a URL names where it came from and how to write it', async () => {
    const flag = await runInProcess(['--registry', '127.0.0.1:4889', 'node', 'show', 'x']);
    expect(flag.stderr).toContain('--registry "127.0.0.1:4889" is not an http:// or https:// URL');
    expect(flag.stderr).toContain('http://127.0.0.1:4889');
    expect(flag.stderr).not.toMatch(/ERR_INVALID_URL|is the registry running/);
    expect(flag.code).toBe(2);
    const env = await runInProcess(['node', 'show', 'x'], { env: { NODEREG_REGISTRY: 'localhost' } });
    expect(env.stderr).toContain('NODEREG_REGISTRY "localhost" is not an http:// or https:// URL');
    expect(env.code).toBe(2);
  });

  it('validate of a directory that does not exist says so, without a raw ENOENT', async () => {
    const result = await runInProcess(['validate', 'no-such-dir-here']);
    expect(result.stderr).toContain('no-such-dir-here does not exist');
    expect(result.stderr).not.toMatch(/ENOENT|lstat/);
    expect(result.code).toBe(2);
  });

  it('an unknown --profile is named, with the profiles there are, not taken as "no token"', async () => {
    const before = server.count();
    const result = await runInProcess(['--registry', server.url, '--profile', 'nope', 'whoami']);
    expect(result.stderr).toContain('there is no profile named "nope"');
    expect(result.stderr).toContain('nodereg login --profile nope');
    expect(result.code).toBe(2);
    expect(server.count()).toBe(before);
  });
});
