// The file set follows git where there is git (DESIGN.md §6): tracked files are in whatever the
// ignore files say, untracked ones unless ignored; .noderegignore, .comfyignore and excludes still
// remove files; earlier archives never ship. Each case is a real repository made here, compared with
// `git ls-files --cached --others --exclude-standard` minus nodereg's own exclusions.
import { execFileSync } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import yazl from 'yazl';
import { describe, expect, it } from 'vitest';
import { selectFiles } from '../../src/package/files.js';
import { loadProject } from '../../src/package/project.js';
import { tempDir } from '../helpers.js';
import { commitAll, git, gitFiles, gitRepo, writeTree } from './fixtures.js';

const selected = (root: string, options = {}) =>
  selectFiles(root, options)
    .files.map((f) => f.path)
    .sort();
/** The oracle less the paths nodereg leaves out on purpose. */
const oracleWithout = (root: string, ours: string[]) => gitFiles(root).filter((path) => !ours.includes(path));
const commit = (root: string, paths: string[]) => {
  git(root, ['add', '-f', '--', ...paths]);
  git(root, ['-c', 'user.name=t', '-c', 'user.email=t@example.org', 'commit', '-q', '--no-gpg-sign', '-m', 'files']);
};

const PYPROJECT = '[project]\nname = "my-node"\nversion = "1.0.0"\nlicense = { file = "LICENSE.txt" }\n';

describe('the file set in a git work tree', () => {
  it('keeps committed files that an ignore rule matches (*.txt with a committed LICENSE.txt and requirements.txt)', async () => {
    const root = gitRepo({
      'pyproject.toml': PYPROJECT,
      '.gitignore': '*.txt\n',
      'LICENSE.txt': 'MIT',
      'requirements.txt': 'numpy\n',
      '__init__.py': '',
    });
    commit(root, ['.']);
    writeTree(root, { 'notes.txt': 'untracked and ignored', 'new_node.py': 'untracked, not ignored' });
    expect(selected(root)).toEqual(oracleWithout(root, []));
    expect(selected(root)).toEqual([
      '.gitignore',
      'LICENSE.txt',
      '__init__.py',
      'new_node.py',
      'pyproject.toml',
      'requirements.txt',
    ]);
    // The license resolves and the dependencies file ships: the project packs as committed.
    const project = await loadProject(root);
    expect(project.problems).toEqual([]);
    expect(project.request?.body.node.license).toBe('LICENSE.txt');
  });

  it('reaches committed files inside an ignored directory, without taking its untracked siblings', () => {
    const root = gitRepo({ '.gitignore': 'build/\n', 'build/web/app.js': 'committed', 'main.py': '' });
    commit(root, ['.']);
    writeTree(root, { 'build/web/app.js.map': 'untracked', 'build/tmp/x': 'untracked' });
    expect(selected(root)).toEqual(oracleWithout(root, []));
    expect(selected(root)).toEqual(['.gitignore', 'build/web/app.js', 'main.py']);
  });

  it('marks untracked files, and only those', () => {
    const root = gitRepo({ '.gitignore': '*.log\n', 'a.py': '', 'keep.log': '' });
    commit(root, ['.']);
    writeTree(root, { 'b.py': '', 'debug.log': '' });
    const untracked = git(root, ['ls-files', '--others', '--exclude-standard', '-z']).split('\0').filter(Boolean);
    const files = selectFiles(root).files;
    expect(files.filter((f) => f.untracked).map((f) => f.path)).toEqual(untracked);
    expect(untracked).toEqual(['b.py']);
    expect(files.find((f) => f.path === 'keep.log')?.untracked).toBeUndefined();
  });

  it('lets .noderegignore, .comfyignore (nested too) and excludes remove tracked and untracked files', () => {
    const root = gitRepo({
      '.comfyignore': 'tests/\n*.md\n!README.md\n',
      '.noderegignore': 'docs/\n',
      'web/.comfyignore': '*.map\n',
      'README.md': '',
      'CHANGES.md': '',
      'tests/test_a.py': '',
      'docs/guide.txt': '',
      'web/app.js': '',
      'web/app.js.map': '',
      'main.py': '',
      'scratch.tmp': '',
    });
    commit(root, ['.']);
    writeTree(root, { 'tests/test_b.py': 'untracked' });
    const ours = [
      'CHANGES.md',
      'tests/test_a.py',
      'tests/test_b.py',
      'docs/guide.txt',
      'web/app.js.map',
      'scratch.tmp',
    ];
    expect(selected(root, { excludes: ['*.tmp'] })).toEqual(oracleWithout(root, ours));
  });

  it('applies no .comfyignore under an include, as the incumbent reads it; .noderegignore and excludes still apply there', () => {
    const root = gitRepo({
      '.gitignore': 'web/dist/\n',
      '.comfyignore': 'web/\n*.map\n',
      '.noderegignore': '*.tmp\n',
      'main.py': '',
      'web/app.js': 'committed, under web/',
      'web/src/app.ts': 'committed',
    });
    commit(root, ['.']);
    writeTree(root, {
      'web/dist/bundle.js': 'built',
      'web/dist/bundle.js.map': 'built',
      'web/dist/x.tmp': '',
      'web/dist/skip.log': '',
      'web/other/x.js': '',
    });
    // .comfyignore leaves web/ out, tracked files too, except the include web/dist; *.map does not reach into it
    expect(selected(root, { includes: ['web/dist'], excludes: ['*.log'] })).toEqual([
      '.comfyignore',
      '.gitignore',
      '.noderegignore',
      'main.py',
      'web/dist/bundle.js',
      'web/dist/bundle.js.map',
    ]);
    // a file named as an include, and a .comfyignore deeper down
    writeTree(root, {
      'web/dist/.comfyignore': '*.js\n',
      'notes/todo.md': '',
      '.comfyignore': 'web/\n*.map\nnotes/\n',
    });
    expect(selected(root, { includes: ['web/dist', '/notes/todo.md'] })).toEqual([
      '.comfyignore',
      '.gitignore',
      '.noderegignore',
      'main.py',
      'notes/todo.md',
      'web/dist/.comfyignore',
      'web/dist/bundle.js',
      'web/dist/bundle.js.map',
      'web/dist/skip.log',
    ]);
    // without includes .comfyignore removes them all
    expect(selected(root)).toEqual(['.comfyignore', '.gitignore', '.noderegignore', 'main.py']);
  });

  it('never packs a stray node.zip at the root, tracked or not, nor an earlier pack of the node anywhere', () => {
    const root = gitRepo({
      'main.py': '',
      'node.zip': 'committed by mistake',
      'assets/textures.zip': 'data',
      'old/my-node-0.9.0.zip': 'old pack',
    });
    commit(root, ['.']);
    writeTree(root, { 'my-node-1.0.0.zip': 'untracked pack' });
    expect(selected(root, { nodeId: 'my-node' })).toEqual(
      oracleWithout(root, ['node.zip', 'old/my-node-0.9.0.zip', 'my-node-1.0.0.zip']),
    );
    expect(selected(root, { nodeId: 'my-node' })).toEqual(['assets/textures.zip', 'main.py']);
  });

  it('lists no tracked file that is gone from the disk', () => {
    const root = gitRepo({ 'a.py': '', 'b.py': '' });
    commit(root, ['.']);
    rmSync(join(root, 'b.py'));
    expect(selected(root)).toEqual(['a.py']);
  });

  it('follows the repository that holds the project when the project is a subdirectory', () => {
    const repo = gitRepo({
      '.gitignore': '*.txt\n',
      'nodes/my-node/pyproject.toml': PYPROJECT,
      'nodes/my-node/LICENSE.txt': 'MIT',
      'other/x.py': '',
    });
    commit(repo, ['.']);
    expect(selected(join(repo, 'nodes/my-node'))).toEqual(['LICENSE.txt', 'pyproject.toml']);
  });

  it('applies the .gitignore files above a project in a subdirectory to its untracked files, as git does', () => {
    const repo = gitRepo({
      '.gitignore': '.env\n*.log\n/nodes/my-node/output/\n',
      'nodes/.gitignore': 'scratch/\n!keep.log\n',
      'nodes/my-node/pyproject.toml': PYPROJECT,
      'nodes/my-node/LICENSE.txt': 'MIT',
    });
    commit(repo, ['.']);
    const dir = join(repo, 'nodes/my-node');
    writeTree(dir, {
      '.env': 'SECRET=1',
      'run.log': '',
      'keep.log': '',
      'output/img.png': '',
      'scratch/x.py': '',
      'new.py': '',
    });
    expect(selected(dir)).toEqual(gitFiles(dir));
    expect(selected(dir)).toEqual(['LICENSE.txt', 'keep.log', 'new.py', 'pyproject.toml']);
  });

  it('takes no rule from a repository that ignores the project and tracks nothing in it (a new node under ComfyUI/custom_nodes)', () => {
    const host = gitRepo({ '.gitignore': '/custom_nodes/\n*.log\n', 'main.py': '' });
    commit(host, ['.']);
    const dir = join(host, 'custom_nodes/my-node');
    writeTree(dir, { 'pyproject.toml': PYPROJECT, 'LICENSE.txt': 'MIT', 'debug.log': '' });
    expect(selected(dir)).toEqual(['LICENSE.txt', 'debug.log', 'pyproject.toml']);
  });

  it('agrees with git on random trees, ignore files and committed subsets (property, fixed seed)', () => {
    const segment = fc.constantFrom('a', 'b', 'c.txt', 'd.log', 'e.py', 'build', 'é');
    const filePath = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'));
    const pattern = fc.constantFrom(
      '*.txt',
      '*.log',
      '!e.py',
      'build/',
      'build',
      '/a',
      'a/',
      'b/*',
      '**/c.txt',
      '*',
      '!*/',
      '!b',
      'é',
    );
    const tree = fc.record({
      files: fc.uniqueArray(filePath, { minLength: 1, maxLength: 10 }),
      ignore: fc.array(pattern, { minLength: 1, maxLength: 4 }),
      committed: fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
    });
    fc.assert(
      fc.property(tree, ({ files, ignore, committed }) => {
        const root = tempDir('nodereg-prop-git-');
        git(root, ['init', '-q']);
        const made: string[] = [];
        for (const path of files) {
          if (made.some((m) => m.startsWith(`${path}/`) || path.startsWith(`${m}/`))) continue;
          writeTree(root, { [path]: path });
          made.push(path);
        }
        writeFileSync(join(root, '.gitignore'), `${ignore.join('\n')}\n`);
        const toCommit = made.filter((_, i) => committed[i]);
        if (toCommit.length) commit(root, toCommit);
        expect(selected(root)).toEqual(gitFiles(root));
      }),
      { numRuns: 30, seed: 20261125 },
    );
  });
});

describe('asking git', () => {
  /** The git commands selectFiles runs, through a git on PATH that logs them. */
  const gitRuns = (root: string): string[] => {
    const bin = tempDir();
    const log = join(bin, 'log');
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$*" >> "${log}"\nexec "${real}" "$@"\n`, { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      selectFiles(root);
    } finally {
      process.env.PATH = path;
    }
    return readFileSync(log, 'utf8').trim().split('\n');
  };

  it('one git ls-files gives the tracked and the untracked files; a submodule alone asks again, for its files', () => {
    const root = gitRepo({ 'pyproject.toml': PYPROJECT, '__init__.py': '' });
    commit(root, ['.']);
    writeTree(root, { 'new_node.py': 'untracked' });
    expect(gitRuns(root)).toEqual(['ls-files -z --stage --cached --others --exclude-standard']);

    const sub = gitRepo({ 'lib.py': 'x = 1\n' });
    commit(sub, ['.']);
    git(root, ['-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', sub, 'vendor']);
    commit(root, ['.']);
    expect(gitRuns(root)).toEqual([
      'ls-files -z --stage --cached --others --exclude-standard',
      'ls-files -z --cached --recurse-submodules',
    ]);
    expect(selected(root)).toContain('vendor/lib.py');
  });
});

describe('outside git', () => {
  it('walks the tree as before: .gitignore files still apply, nothing is marked untracked', () => {
    const root = writeTree(tempDir(), {
      '.gitignore': '*.txt\n',
      'LICENSE.txt': '',
      'a.py': '',
      '.comfyignore': 'a.py\n',
    });
    const files = selectFiles(root).files;
    expect(files.map((f) => f.path)).toEqual(['.comfyignore', '.gitignore']);
    expect(files.some((f) => f.untracked)).toBe(false);
  });
});

/** A zip holding these files (a node archive when one of them is pyproject.toml). */
function writeZip(path: string, files: Record<string, string | Buffer>): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content), name);
  zip.end();
  return new Promise((resolve, reject) => {
    zip.outputStream.pipe(createWriteStream(path)).on('close', resolve).on('error', reject);
  });
}

/** The warnings about the file set, not about [project] keys (these fixtures set no description). */
const fileWarnings = (warnings: string[]) => warnings.filter((w) => !w.startsWith('[project] '));

describe('archives in the tree', () => {
  it('leaves out every earlier archive of a node, whatever its name, and names each with its size', async () => {
    const root = writeTree(tempDir(), { 'pyproject.toml': PYPROJECT.replace(/license.*\n/, ''), 'main.py': '' });
    await writeZip(join(root, 'dist-x.zip'), { 'pyproject.toml': '[project]\nname = "my-node"\n', 'main.py': '' });
    await writeZip(join(root, 'renamed-id-1.0.0.zip'), { 'pyproject.toml': '[project]\nname = "old-id"\n' });
    await writeZip(join(root, 'models.zip'), { 'weights.bin': 'w', 'sub/pyproject.toml': 'not at the root' });
    writeTree(root, { 'broken.zip': 'not a zip at all' });
    const project = await loadProject(root);
    expect(project.files.map((f) => f.path)).toEqual(['broken.zip', 'main.py', 'models.zip', 'pyproject.toml']);
    expect(fileWarnings(project.warnings)).toEqual([
      expect.stringMatching(/^dist-x\.zip \(\d+ B\) is left out: it is an archive of a node/),
      expect.stringMatching(/^renamed-id-1\.0\.0\.zip \(\d+ B\) is left out: it is an archive of a node/),
    ]);
  });

  it('warns about any other archive over 1 MiB that would ship, naming it and its size', async () => {
    const root = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "my-node"\nversion = "1.0.0"\n',
      'main.py': '',
      'vendor/lib.tar.gz': Buffer.alloc(3 * 1024 * 1024 + 1),
      'small.zip': Buffer.alloc(1024 * 1024),
      'data.bin': Buffer.alloc(2 * 1024 * 1024),
    });
    const project = await loadProject(root);
    expect(fileWarnings(project.warnings)).toEqual([
      'vendor/lib.tar.gz (3.0 MiB) is an archive and ships in this node; if it should not, leave it out with .noderegignore or [tool.nodereg] excludes',
    ]);
    expect(project.files.map((f) => f.path)).toContain('vendor/lib.tar.gz');
  });

  it("does not ship a repository's committed earlier pack either", async () => {
    const root = gitRepo({ 'pyproject.toml': '[project]\nname = "my-node"\nversion = "1.0.0"\n', 'main.py': '' });
    await writeZip(join(root, 'release.zip'), { 'pyproject.toml': '[project]\nname = "my-node"\n' });
    commitAll(root);
    expect((await loadProject(root)).files.map((f) => f.path)).toEqual(['main.py', 'pyproject.toml']);
  });
});
