// A publisher of the incumbent client switches to nodereg with no edits: a repository whose
// pyproject.toml has only [tool.comfy], a .comfyignore, committed files that .gitignore matches and
// the incumbent's node.zip; validate, pack, publish --dry-run, init and publish, as a user runs them (in-process).
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'smol-toml';
import { runInProcess } from '../cli/in-process.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { commitAll, git, gitFiles, gitRepo, writeTree } from '../package/fixtures.js';

const PYPROJECT = `[project]
name = "comfyui-relight"
description = "Relights portraits"
version = "1.2"
license = { file = "LICENSE.txt" }
dependencies = ["numpy>=1.26"]
classifiers = ["Operating System :: OS Independent", "Environment :: GPU :: NVIDIA CUDA"]

[project.urls]
Repository = "https://example.org/ada/comfyui-relight"

# Used by the registry
[tool.comfy]
PublisherId = "ada"
DisplayName = "Relight Portraits"
Icon = "https://example.org/relight.png"
includes = []
requires-comfyui = ">=0.3.0"
`;

/** The repository as its publisher has it: committed, with what the incumbent and a build leave lying around. */
function incumbentRepo(): string {
  const root = gitRepo({
    'pyproject.toml': PYPROJECT,
    '.gitignore': '*.txt\n__pycache__/\n',
    '.comfyignore': 'tests/\ndocs/\n',
    'LICENSE.txt': 'MIT License\n',
    'requirements.txt': 'numpy>=1.26\n',
    '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    'nodes/relight.py': '# relight\n',
    'tests/test_relight.py': 'def test(): pass\n',
    'docs/guide.md': '# Guide\n',
  });
  git(root, ['add', '-f', 'LICENSE.txt', 'requirements.txt']);
  commitAll(root);
  writeTree(root, {
    'node.zip': 'left by the incumbent',
    'scratch.txt': 'ignored',
    'nodes/wip.py': '# not committed yet\n',
  });
  return root;
}

const unzipList = (zip: string) =>
  execFileSync('unzip', ['-Z1', zip], { encoding: 'utf8' }).split('\n').filter(Boolean);
const EXPECTED_FILES = [
  '.comfyignore',
  '.gitignore',
  'LICENSE.txt',
  '__init__.py',
  'nodes/relight.py',
  'nodes/wip.py',
  'pyproject.toml',
  'requirements.txt',
];

describe('a repository with only [tool.comfy]', () => {
  it('validates, naming the keys it read', async () => {
    const dir = incumbentRepo();
    const result = await runInProcess(['validate', dir, '--offline']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('comfyui-relight 1.2.0 (publisher ada) is ready to publish: 8 files');
    expect(result.stdout).toMatch(/^ {2}publisher +\[tool\.comfy\] PublisherId$/m);
    expect(result.stdout).toMatch(/^ {2}name +\[tool\.comfy\] DisplayName$/m);
    expect(result.stdout).toMatch(/^ {2}icon +\[tool\.comfy\] Icon$/m);
    expect(result.stdout).toMatch(/^ {2}supported_appui_version +\[tool\.comfy\] requires-comfyui$/m);
    expect(result.stdout).toMatch(/^ {2}supported_accelerators +\[project\] classifiers$/m);
  });

  it('publish --dry-run carries its DisplayName and Icon, and packs the files git has, less ours', async () => {
    const dir = incumbentRepo();
    const result = await runInProcess(['publish', dir, '--dry-run', '--json'], {
      env: { NODEREG_REGISTRY: 'http://127.0.0.1:9' },
    });
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.publisher_id).toBe('ada');
    expect(report.request.body.node).toEqual({
      id: 'comfyui-relight',
      name: 'Relight Portraits',
      icon: 'https://example.org/relight.png',
      description: 'Relights portraits',
      license: 'LICENSE.txt',
      repository: 'https://example.org/ada/comfyui-relight',
      supported_os: ['OS Independent'],
      supported_accelerators: ['GPU :: NVIDIA CUDA'],
      supported_appui_version: '>=0.3.0',
    });
    expect(report.request.body.node_version).toMatchObject({ version: '1.2.0', dependencies: ['numpy>=1.26'] });
    const listed = report.file_list.map((f: { path: string }) => f.path);
    expect(listed).toEqual(EXPECTED_FILES);
    // The oracle: what git has, less .comfyignore's matches and the incumbent's node.zip.
    expect(listed).toEqual(
      gitFiles(dir).filter((p) => !['node.zip', 'tests/test_relight.py', 'docs/guide.md'].includes(p)),
    );
    expect(
      report.file_list.filter((f: { untracked?: boolean }) => f.untracked).map((f: { path: string }) => f.path),
    ).toEqual(['nodes/wip.py']);
  });

  it('pack --list marks what is not committed', async () => {
    const dir = incumbentRepo();
    const result = await runInProcess(['pack', dir, '--list', '--out', join(tempDir(), 'x.zip')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\s+\S+ B\s+nodes\/wip\.py {2}\(untracked\)$/m);
    expect(result.stdout).toMatch(/^\s+\S+ B\s+LICENSE\.txt$/m);
  });

  it.each(['>=v0.3.0', '0.3.x'])(
    'warns about a requires-comfyui of %s, which the incumbent would not send, and sends none',
    async (value) => {
      const dir = incumbentRepo();
      writeTree(dir, {
        'pyproject.toml': PYPROJECT.replace('requires-comfyui = ">=0.3.0"', `requires-comfyui = "${value}"`),
      });
      const warning = `warning: [tool.comfy] requires-comfyui "${value}" is not a version requirement the registry can use (an operator and an X.Y.Z version, parts separated by commas: ">=0.3.0", ">=0.3.0, <0.4.0"); it is not sent, as the incumbent client sends none\n`;
      const validated = await runInProcess(['validate', dir, '--offline']);
      expect(validated.code).toBe(0);
      expect(validated.stderr).toBe(warning);
      expect(validated.stdout).not.toContain('supported_appui_version');
      // the manifest was changed after the commit: --allow-dirty, as the dirty-tree guard's hint says
      const dry = await runInProcess(['publish', dir, '--dry-run', '--json', '--allow-dirty'], {
        env: { NODEREG_REGISTRY: 'http://127.0.0.1:9' },
      });
      expect(dry.code).toBe(0);
      expect(dry.stderr).toContain(warning);
      const { body } = JSON.parse(dry.stdout).request;
      expect(body.node).not.toHaveProperty('supported_appui_version');
      expect(body.node_version).not.toHaveProperty('supported_appui_version');
    },
  );

  it('init adopts [tool.comfy] instead of asking, and writes nothing it already has', async () => {
    const dir = incumbentRepo();
    const result = await runInProcess(['init', dir, '--json']);
    expect(result.stderr).not.toContain('error');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      created: false,
      added: {},
      adopted: ['[tool.comfy] PublisherId', '[tool.comfy] DisplayName', '[tool.comfy] Icon'],
    });
    expect(readFileSync(join(dir, 'pyproject.toml'), 'utf8')).toBe(PYPROJECT);
    expect((parse(PYPROJECT) as { tool: Record<string, unknown> }).tool.nodereg).toBeUndefined();
  });
});

describe('earlier archives inside the node', () => {
  it('pack --out dist/x.zip inside the node, then pack again: the first archive is not in the second', async () => {
    const dir = incumbentRepo();
    const first = await runInProcess(['pack', '--out', 'dist/x.zip'], { cwd: dir });
    expect(first.code).toBe(0);
    const second = await runInProcess(['pack', '--out', 'dist/y.zip', '--json'], { cwd: dir });
    expect(second.code).toBe(0);
    expect(unzipList(join(dir, 'dist/y.zip'))).toEqual(EXPECTED_FILES);
    expect(second.stderr).toMatch(/warning: dist\/x\.zip \(\d+(\.\d)? KiB\) is left out: it is an archive of a node/);
    // The same after the node id was renamed: the old id's packs stay out.
    writeTree(dir, { 'pyproject.toml': PYPROJECT.replace('name = "comfyui-relight"', 'name = "relight"') });
    const renamed = await runInProcess(['pack', '--out', 'dist/z.zip'], { cwd: dir });
    expect(renamed.code).toBe(0);
    expect(unzipList(join(dir, 'dist/z.zip'))).toEqual(EXPECTED_FILES);
    expect(statSync(join(dir, 'dist/z.zip')).size).toBeLessThan(statSync(join(dir, 'dist/x.zip')).size * 2);
  });

  it('warns about any other archive over 1 MiB that would ship, with its size', async () => {
    const dir = incumbentRepo();
    writeTree(dir, { 'assets/textures.tar.gz': Buffer.alloc(1536 * 1024, 7) });
    const result = await runInProcess(['pack', '--out', join(tempDir(), 'x.zip')], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('warning: assets/textures.tar.gz (1.5 MiB) is an archive and ships in this node');
  });
});

describe('a node in a subdirectory of a repository', () => {
  it("ships none of the untracked files the repository's .gitignore ignores (a .env, logs)", async () => {
    const repo = gitRepo({
      '.gitignore': '.env\n*.log\n',
      'packs/relight/pyproject.toml': PYPROJECT,
      'packs/relight/LICENSE.txt': 'MIT\n',
    });
    commitAll(repo);
    const dir = join(repo, 'packs/relight');
    writeTree(dir, { '.env': 'API_KEY=secret\n', 'run.log': 'log\n', 'nodes/wip.py': '# not committed yet\n' });
    const out = join(tempDir(), 'x.zip');
    const result = await runInProcess(['pack', '--list', '--out', out], { cwd: dir });
    expect(result.code).toBe(0);
    expect(unzipList(out)).toEqual(['LICENSE.txt', 'nodes/wip.py', 'pyproject.toml']);
    expect(result.stdout).not.toContain('.env');
  });
});

describe('publishing over a node the incumbent created', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('keeps its display name and license when the manifest does not set them, and names a new node after its id', async () => {
    const admin = { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' };
    expect(
      (await fetch(`${server.url}/publishers`, { method: 'POST', headers: admin, body: JSON.stringify({ id: 'ada' }) }))
        .status,
    ).toBe(201);
    const created = await fetch(`${server.url}/publishers/ada/nodes/comfyui-relight/versions`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({
        node: { id: 'comfyui-relight', name: 'Display Name', license: '{"file": "LICENSE"}', icon: '', banner_url: '' },
        node_version: { version: '1.0' },
      }),
    });
    expect(created.status).toBe(201);

    const dir = incumbentRepo();
    writeTree(dir, {
      'pyproject.toml':
        '[project]\nname = "comfyui-relight"\nversion = "1.1.0"\n\n[tool.comfy]\nPublisherId = "ada"\nIcon = ""\n',
    });
    const env = { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: server.adminToken };
    const published = await runInProcess(['publish', dir, '--json', '--allow-dirty'], { env });
    // the only words on stderr: the two keys it does not set, which the node keeps from before, and the file not committed
    expect(published.stderr.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^warning: \[project\] description is not set: .*\(a published one keeps its own\)/),
      expect.stringMatching(/^warning: \[project\] license is not set: .*\(a published one keeps its own\)/),
      expect.stringMatching(
        /^warning: 1 file that git does not track ships \(the incumbent client packed only committed files\): nodes\/wip\.py;/,
      ),
    ]);
    expect(published.code).toBe(0);
    const node = await (await fetch(`${server.url}/nodes/comfyui-relight`)).json();
    expect(node).toMatchObject({
      name: 'Display Name',
      license: '{"file": "LICENSE"}',
      icon: '',
      latest_version: { version: '1.1.0' },
    });

    writeTree(dir, {
      'pyproject.toml': '[project]\nname = "fresh-node"\nversion = "1"\n\n[tool.comfy]\nPublisherId = "ada"\n',
    });
    expect((await runInProcess(['publish', dir, '--allow-dirty'], { env })).code).toBe(0);
    expect(await (await fetch(`${server.url}/nodes/fresh-node`)).json()).toMatchObject({
      name: 'fresh-node',
      description: '',
    });
  });
});
