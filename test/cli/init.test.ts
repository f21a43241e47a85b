// nodereg init: a new pyproject.toml, or [tool.nodereg] added to an existing one with every other
// byte kept; prompts on a terminal (injected here), flags otherwise; never overwrites.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/cli/program.js';
import { checkHints } from './hint-check.js';
import type { Prompts } from '../../src/cli/context.js';
import { loadProject } from '../../src/package/project.js';
import { runInProcess } from './in-process.js';
import { runCli, tempDir } from '../helpers.js';
import { git, gitRepo } from '../package/fixtures.js';

interface Question {
  message: string;
  default?: string;
  validate: (value: string) => string | boolean | Promise<string | boolean>;
}

/** Answers questions in order; an answer the question's validation refuses is recorded and the next one is tried. */
function fakePrompts(answers: string[]) {
  const asked: { message: string; default?: string }[] = [];
  const refused: { answer: string; reason: string }[] = [];
  const prompts = {
    input: async (question: Question) => {
      asked.push({ message: question.message, default: question.default });
      for (;;) {
        if (!answers.length) throw new Error(`no answer left for "${question.message}"`);
        const answer = answers.shift()!;
        const value = answer === '' && question.default !== undefined ? question.default : answer;
        const verdict = await question.validate(value);
        if (verdict === true) return value;
        refused.push({ answer, reason: String(verdict) });
      }
    },
  };
  return { asked, refused, prompts: async () => prompts as unknown as Prompts };
}

async function init(args: string[], deps: { interactive?: boolean; prompts?: () => Promise<Prompts> } = {}) {
  let stdout = '';
  let stderr = '';
  const code = await run(['init', ...args], '0.0.0-test', {
    env: { CI: '1', NO_COLOR: '1' },
    stdout: { write: (s: string) => ((stdout += s), true) },
    stderr: { write: (s: string) => ((stderr += s), true) },
    interactive: deps.interactive ?? false,
    prompts: deps.prompts,
  });
  await checkHints(stdout, stderr);
  return { code, stdout, stderr };
}

const EXISTING = `# My project
[build-system]
requires = ["setuptools>=61"]   # keep this comment
build-backend = "setuptools.build_meta"

[project]
name = "img-tools"
version = "2.1"
description = "Image tools"
dependencies = [
  "numpy",  # aligned
]

[tool.black]
line-length = 100
`;

describe('nodereg init', () => {
  it('creates pyproject.toml in an empty directory from flags, and the result validates', async () => {
    const dir = join(tempDir(), 'my-node');
    const result = await init([
      dir,
      '--publisher',
      'ada',
      '--display-name',
      'My Node',
      '--tags',
      'image, upscale',
      '--description',
      'Nice',
      '--version',
      '1.0',
    ]);
    expect(result.code).toBe(0);
    const doc = parse(readFileSync(join(dir, 'pyproject.toml'), 'utf8'));
    expect(doc).toEqual({
      project: { name: 'my-node', version: '1.0', description: 'Nice' },
      tool: { nodereg: { publisher: 'ada', 'display-name': 'My Node', tags: ['image', 'upscale'] } },
    });
    expect((await loadProject(dir, { requirePublisher: true })).request?.version).toBe('1.0.0');
  });

  it('adds [tool.nodereg] to an existing pyproject.toml keeping every other byte', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'pyproject.toml'), EXISTING);
    const result = await init([dir, '--publisher', 'ada', '--tags', 'image']);
    expect(result.code).toBe(0);
    const text = readFileSync(join(dir, 'pyproject.toml'), 'utf8');
    expect(text.startsWith(EXISTING)).toBe(true);
    expect(text.slice(EXISTING.length)).toBe('\n[tool.nodereg]\npublisher = "ada"\ntags = [ "image" ]\n');
    expect(result.stdout).toMatch(/added .*pyproject\.toml: \[tool\.nodereg\] publisher, \[tool\.nodereg\] tags/);
  });

  it('adds missing keys under an existing [tool.nodereg] header, nothing else moves (CRLF kept)', async () => {
    const dir = tempDir();
    const before =
      '[project]\r\nname = "n"\r\nversion = "1.0.0"\r\n\r\n[tool.nodereg]  # ours\r\ntags = ["x"]\r\n\r\n[tool.other]\r\na = 1\r\n';
    writeFileSync(join(dir, 'pyproject.toml'), before);
    expect((await init([dir, '--publisher', 'ada'])).code).toBe(0);
    expect(readFileSync(join(dir, 'pyproject.toml'), 'utf8')).toBe(
      before.replace('# ours\r\n', '# ours\r\npublisher = "ada"\r\n'),
    );
  });

  it('puts the version in [tool.nodereg] when [project] version is dynamic', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'pyproject.toml'), '[project]\nname = "n"\ndynamic = ["version"]\n');
    expect((await init([dir, '--publisher', 'ada', '--version', '0.3.0'])).code).toBe(0);
    expect(parse(readFileSync(join(dir, 'pyproject.toml'), 'utf8')).tool).toEqual({
      nodereg: { publisher: 'ada', version: '0.3.0' },
    });
  });

  it('refuses to overwrite existing keys, naming each, and writes nothing', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'pyproject.toml'), EXISTING);
    const result = await init([dir, '--publisher', 'ada', '--name', 'other', '--version', '3.0']);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      /init does not overwrite what pyproject\.toml already has: \[project\] name is "img-tools", not "other" \(--name\); \[project\] version is "2\.1", not "3\.0" \(--version\)/,
    );
    expect(readFileSync(join(dir, 'pyproject.toml'), 'utf8')).toBe(EXISTING);
  });

  it('says so when there is nothing to add', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'pyproject.toml'),
      '[project]\nname = "n"\nversion = "1"\n[tool.nodereg]\npublisher = "ada"\n',
    );
    const result = await init([dir, '--publisher', 'ada']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/already has everything init sets/);
  });

  it('names the missing flag when it cannot ask', async () => {
    const result = await init([tempDir()]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/missing --publisher: .*init cannot ask here/);
    expect(result.stderr).toMatch(/hint: nodereg init --publisher <value>/);
  });

  it('names a flag whose value breaks a rule', async () => {
    const result = await init([tempDir(), '--publisher', 'Not_Valid']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--publisher "Not_Valid": must be 2–64 characters/);
    const bad = await init([tempDir(), '--publisher', 'ada', '--version', '1.0.post1']);
    expect(bad.stderr).toMatch(/--version "1\.0\.post1": .*post-release/);
  });

  it('refuses a directory name that is no node id unless --name is given', async () => {
    const dir = join(tempDir(), '---');
    const result = await init([dir, '--publisher', 'ada']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/missing --name: the directory name "---" is not a valid node id/);
  });

  it('asks on a terminal, re-asks after an invalid answer, and takes defaults', async () => {
    const dir = join(tempDir(), 'cool-node');
    const fake = fakePrompts(['', '', 'A cool node', 'Bad Publisher', 'ada', 'Cool Node', 'image,  video']);
    const result = await init([dir], { interactive: true, prompts: fake.prompts });
    expect(result.code).toBe(0);
    expect(fake.asked).toEqual([
      { message: 'Node id ([project] name)', default: 'cool-node' },
      { message: 'Version', default: '0.1.0' },
      { message: 'Description (optional)', default: undefined },
      { message: 'Publisher id', default: undefined },
      { message: 'Display name', default: 'cool-node' },
      { message: 'Tags, comma-separated (optional)', default: undefined },
    ]);
    expect(fake.refused).toEqual([{ answer: 'Bad Publisher', reason: expect.stringMatching(/lowercase letters/) }]);
    expect(parse(readFileSync(join(dir, 'pyproject.toml'), 'utf8'))).toEqual({
      project: { name: 'cool-node', version: '0.1.0', description: 'A cool node' },
      tool: { nodereg: { publisher: 'ada', 'display-name': 'Cool Node', tags: ['image', 'video'] } },
    });
  });

  it('asks only for what an existing pyproject.toml lacks', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'pyproject.toml'), EXISTING);
    const fake = fakePrompts(['ada', '', '']);
    expect((await init([dir], { interactive: true, prompts: fake.prompts })).code).toBe(0);
    expect(fake.asked.map((q) => q.message)).toEqual([
      'Publisher id',
      'Display name',
      'Tags, comma-separated (optional)',
    ]);
    expect(readFileSync(join(dir, 'pyproject.toml'), 'utf8')).toBe(`${EXISTING}\n[tool.nodereg]\npublisher = "ada"\n`);
  });

  it('a Ctrl-C in a prompt exits 130 and writes nothing', async () => {
    const dir = tempDir();
    const prompts = async () =>
      ({
        input: async () => {
          throw Object.assign(new Error('User force closed the prompt'), { name: 'ExitPromptError' });
        },
      }) as unknown as Prompts;
    const result = await init([dir], { interactive: true, prompts });
    expect(result.code).toBe(130);
    expect(() => readFileSync(join(dir, 'pyproject.toml'))).toThrow(/ENOENT/);
  });

  it('works as a user runs it: the spawned binary, then validate', async () => {
    const dir = join(tempDir(), 'spawned-node');
    const created = await runInProcess(['init', dir, '--publisher', 'ada', '--json']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({
      path: join(dir, 'pyproject.toml'),
      created: true,
      added: { 'project.name': 'spawned-node', 'project.version': '0.1.0', 'tool.nodereg.publisher': 'ada' },
      adopted: [],
    });
    // the next commands as the user runs them from here: with the directory named
    expect(created.stderr).toContain(
      `hint: check it with \`nodereg validate ${dir}\`, then publish with \`nodereg publish ${dir}\``,
    );
    // --offline: the result must not depend on a registry that happens to answer on the default port
    const validated = await runInProcess(['validate', dir, '--offline']);
    expect(validated.code).toBe(0);
    const size = readFileSync(join(dir, 'pyproject.toml')).length;
    expect(validated.stdout).toMatch(
      new RegExp(
        `^spawned-node 0\\.1\\.0 \\(publisher ada\\) is ready to publish: 1 file, ${size} B\\nread from:\\n[^]*  publisher +\\[tool\\.nodereg\\] publisher\\n`,
      ),
    );
  });
});

describe('init in a repository as `comfy node init` finds it', () => {
  it('a new file takes the LICENSE file, the packages of requirements.txt and the git remote, as the incumbent does; validate then warns of no license (it did, and the user had to add it by hand)', async () => {
    const dir = gitRepo({
      LICENSE: 'MIT License\n',
      'requirements.txt':
        '# runtime\ntorch\nnumpy>=1.26  # arrays\n--extra-index-url https://download.pytorch.org/whl/cu121\n-r extra.txt\n\n',
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    });
    // a CI clone's remote carries its token: never written into the file
    git(dir, ['remote', 'add', 'origin', 'https://x-access-token:ghs_secret@github.com/ada/ComfyUI-Relight.git']);
    const created = await runInProcess(['init', '--publisher', 'ada'], { cwd: dir });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain(
      '; from the directory: [project] license (a LICENSE file), [project] dependencies (requirements.txt), [project.urls] Repository (the git remote origin)',
    );
    const text = readFileSync(join(dir, 'pyproject.toml'), 'utf8');
    expect(text).not.toContain('ghs_secret');
    expect(parse(text)).toEqual({
      project: {
        name: basename(dir),
        version: '0.1.0',
        license: { file: 'LICENSE' },
        dependencies: ['torch', 'numpy>=1.26'],
        urls: { Repository: 'https://github.com/ada/ComfyUI-Relight' },
      },
      tool: { nodereg: { publisher: 'ada' } },
    });
    // (the --extra-index-url line is a high scan finding of its own: not what this test is about)
    const validated = await runInProcess(['validate', '--offline', '--fail-on', 'critical'], { cwd: dir });
    expect(validated.code, validated.stderr).toBe(0);
    expect(validated.stderr).not.toContain('license');
    expect(validated.stdout).toMatch(/repository +\[project\.urls\] Repository\n/);
  });

  it('an SSH remote gives its https URL, without the SSH port; a local path gives none', async () => {
    for (const [remote, repository] of [
      ['git@github.com:ada/relight.git', 'https://github.com/ada/relight'],
      ['ssh://git@gitlab.example:2222/ada/relight.git', 'https://gitlab.example/ada/relight'],
      ['/srv/git/relight.git', undefined],
    ] as const) {
      const dir = gitRepo({});
      git(dir, ['remote', 'add', 'origin', remote]);
      expect((await init([dir, '--publisher', 'ada', '--name', 'relight'])).code).toBe(0);
      expect(parse(readFileSync(join(dir, 'pyproject.toml'), 'utf8')).project).toEqual(
        repository
          ? { name: 'relight', version: '0.1.0', urls: { Repository: repository } }
          : { name: 'relight', version: '0.1.0' },
      );
    }
  });
});

describe('init with 64-bit integers in pyproject.toml', () => {
  it('adds its keys next to them, and names one that holds a different value', async () => {
    const dir = tempDir();
    const file = join(dir, 'pyproject.toml');
    writeFileSync(
      file,
      '[project]\nname = "big-ints"\nversion = "1.0.0"\n\n[tool.other]\nseed = 9223372036854775807\n',
    );
    const added = await init([dir, '--publisher', 'ada']);
    expect(added.code, added.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(
      '[project]\nname = "big-ints"\nversion = "1.0.0"\n\n[tool.other]\nseed = 9223372036854775807\n\n[tool.nodereg]\npublisher = "ada"\n',
    );
    writeFileSync(
      file,
      '[project]\nname = "big-ints"\nversion = "1.0.0"\n\n[tool.nodereg]\npublisher = 9223372036854775807\n',
    );
    const refused = await init([dir, '--publisher', 'ada']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('[tool.nodereg] publisher is "9223372036854775807", not "ada" (--publisher)');
  });
});
