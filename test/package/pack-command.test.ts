// validate and pack as a user runs them: in-process (runInProcess) on fixture trees, no network; spawned only where
// the process's own environment counts (its time zone, the HOME of the git it runs).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { cliEnv, INSTALLED_BIN, PNG, runCli, tempDir } from '../helpers.js';
import { checkHints } from '../cli/hint-check.js';
import { commitAll, committedRepo, git, writeTree } from './fixtures.js';

const PYPROJECT =
  '[project]\nname = "demo-node"\nversion = "0.4"\ndescription = "A demo node"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "ada"\nexcludes = ["*.tmp"]\n';

function demo(): string {
  return committedRepo({
    'pyproject.toml': PYPROJECT,
    '.gitignore': 'build/\n*.log\n',
    LICENSE: 'MIT License',
    'nodes/__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    'nodes/résumé.py': '# é\n',
    'web/日本語.js': 'export {}\n',
    'assets/🎨.png': randomBytes(2000),
    'build/out.bin': 'ignored',
    'debug.log': 'ignored',
    'scratch.tmp': 'excluded',
    '__pycache__/x.pyc': 'never',
  });
}

const unzipList = (zip: string) =>
  execFileSync('unzip', ['-Z1', zip], { encoding: 'utf8' }).split('\n').filter(Boolean);

describe('nodereg validate', () => {
  it('reports every problem at once with exit 2', async () => {
    const dir = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "bad id"\nversion = "1.0.dev1"\n[tool.nodereg]\ntags = "x"\n',
      'a.py': '',
    });
    const result = await runInProcess(['validate', dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: the project in ${dir} has 4 problems to fix:`);
    expect(result.stderr).toContain('  [tool.nodereg] publisher: is missing');
    expect(result.stderr).toContain('  [project] version: "1.0.dev1" is a development release');
    expect(result.stderr).toContain('  [project] name: must be letters, digits');
    expect(result.stderr).toContain('  [tool.nodereg] tags: must be a list, such as ["first", "second"]');
    expect(result.stderr).toContain('hint: fix them, then check again');
    expect(result.stdout).toBe('');
  });

  it('names no directory for an empty one given: it is the current one', async () => {
    const dir = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "bad id"\nversion = "1.0.0"\n[tool.nodereg]\npublisher = "acme"\n',
      'a.py': '',
    });
    const result = await runInProcess(['validate', '', '--offline'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: the project has 1 problem to fix:');
    expect(result.stderr).toContain('hint: fix it, then check again');
  });

  it('prints one JSON document either way', async () => {
    const ok = await runInProcess(['validate', demo(), '--json', '--offline']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({
      valid: true,
      publisher_id: 'ada',
      node_id: 'demo-node',
      version: '0.4.0',
      files: 7,
      unpacked_size: expect.any(Number),
      keys: expect.objectContaining({ publisher: '[tool.nodereg] publisher', 'node.id': '[project] name' }),
      warnings: [],
      limits_checked: null,
      scan: { findings: [], files: 7, suppressed: 0 },
      node_classes: expect.objectContaining({ status: expect.any(String) }),
    });
    const bad = await runInProcess(['validate', tempDir(), '--json']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error).toMatchObject({
      code: 'invalid_manifest',
      message: expect.stringContaining('pyproject.toml: not found'),
    });
  });

  it("offline, fails as pack does on a tree whose stored files alone pass pack's default limit, naming the largest", async () => {
    // Model weights are stored, not deflated: 220 MiB of them make an archive over 200 MiB (sparse files, no disk used).
    const dir = writeTree(tempDir(), {
      'pyproject.toml': PYPROJECT,
      '__init__.py': '',
      'models/small.safetensors': '',
    });
    writeFileSync(join(dir, 'models/unet.safetensors'), '');
    truncateSync(join(dir, 'models/unet.safetensors'), 120 * 2 ** 20);
    truncateSync(join(dir, 'models/small.safetensors'), 100 * 2 ** 20);
    const validated = await runInProcess(['validate', dir, '--offline']);
    expect(validated.stdout).toBe('');
    expect(validated.code).toBe(2);
    expect(validated.stderr).toContain(
      'error: the archive is larger than --max-size (209,715,200 bytes); the largest files are:\n     120 MiB  models/unet.safetensors\n     100 MiB  models/small.safetensors\n',
    );
    const packed = await runInProcess(['pack', dir, '--out', join(tempDir(), 'x.zip')]);
    expect(packed.code).toBe(2);
    expect(packed.stderr).toBe(validated.stderr);
    expect((await runInProcess(['validate', dir, '--offline', '--max-size', '1GiB'])).code).toBe(0);
  });

  it('warns about an include that names an empty directory, as about one that matches nothing', async () => {
    // web/dist before the build: the directory is there, its files are not
    const dir = writeTree(tempDir(), {
      'pyproject.toml': `${PYPROJECT}includes = ["web/dist", "web/empty-tree", "assets"]\n`,
      '__init__.py': '',
      'assets/icon.png': PNG,
    });
    mkdirSync(join(dir, 'web/dist'), { recursive: true });
    mkdirSync(join(dir, 'web/empty-tree/sub'), { recursive: true });
    const result = await runInProcess(['validate', dir, '--offline']);
    expect(result.code).toBe(0);
    const matchesNothing = (path: string) =>
      `warning: [tool.nodereg] includes: "${path}" matches nothing in the project (it does not exist, is an empty directory, or .noderegignore, excludes or the always-excluded names leave it out)\n`;
    expect(result.stderr).toBe(matchesNothing('web/dist') + matchesNothing('web/empty-tree'));
  });
});

describe('nodereg pack', () => {
  it('writes <id>-<version>.zip in the current directory with exactly the selected files, and reports it', async () => {
    const dir = demo();
    const cwd = tempDir();
    const result = await runInProcess(['pack', dir], { cwd });
    expect(result.code).toBe(0);
    const zip = join(cwd, 'demo-node-0.4.0.zip');
    const sha = createHash('sha256').update(readFileSync(zip)).digest('hex');
    expect(result.stdout).toContain(`demo-node 0.4.0 → ${zip}`);
    expect(result.stdout).toMatch(/files\s+7\n/);
    expect(result.stdout).toContain(`sha256    ${sha}`);
    expect(execFileSync('unzip', ['-t', zip], { encoding: 'utf8' })).toMatch(/No errors detected/);
    expect(unzipList(zip)).toEqual([
      '.gitignore',
      'LICENSE',
      'assets/🎨.png',
      'nodes/__init__.py',
      'nodes/résumé.py',
      'pyproject.toml',
      'web/日本語.js',
    ]);
  });

  it('never packs its own output, nor an earlier pack, when writing into the project', async () => {
    const dir = demo();
    const first = await runInProcess(['pack', '--json'], { cwd: dir });
    const second = await runInProcess(['pack', '--json'], { cwd: dir });
    const out = await runInProcess(['pack', '--out', 'sub/x.zip', '--json'], { cwd: dir });
    expect([first.code, second.code, out.code]).toEqual([0, 0, 0]);
    expect(JSON.parse(second.stdout).archive_sha256).toBe(JSON.parse(first.stdout).archive_sha256);
    expect(JSON.parse(out.stdout).archive_sha256).toBe(JSON.parse(first.stdout).archive_sha256);
    expect(unzipList(join(dir, 'sub/x.zip'))).not.toContain('demo-node-0.4.0.zip');
    expect(readdirSync(join(dir, 'sub'))).toEqual(['x.zip']); // no partial file left behind
  });

  it('is byte-identical across time zones', async () => {
    const dir = demo();
    const shas: string[] = [];
    for (const TZ of ['UTC', 'Asia/Tokyo', 'America/St_Johns']) {
      const out = join(tempDir(), 'a.zip');
      // spawned: the time zone is the process's
      const result = await runCli(['pack', dir, '--out', out], { env: { TZ } });
      expect(result.code).toBe(0);
      shas.push(createHash('sha256').update(readFileSync(out)).digest('hex'));
      expect(execFileSync('zipinfo', ['-T', out], { encoding: 'utf8' })).toMatch(/ 19800101\.000000 /);
    }
    expect(new Set(shas).size).toBe(1);
  });

  it('--list and --json list the files with their sizes', async () => {
    const dir = demo();
    const listed = await runInProcess(['pack', dir, '--out', join(tempDir(), 'l.zip'), '--list']);
    expect(listed.stdout).toMatch(/^\s+11 B\s+LICENSE$/m);
    const json = JSON.parse(
      (await runInProcess(['pack', dir, '--out', join(tempDir(), 'j.zip'), '--list', '--json'])).stdout,
    );
    expect(json.file_list).toContainEqual({ path: 'web/日本語.js', size: 10 });
    expect(json).toMatchObject({ node_id: 'demo-node', version: '0.4.0', files: 7 });
  });

  it('fails past --max-size with the ten largest files and leaves no archive', async () => {
    const files: Record<string, Buffer | string> = { 'pyproject.toml': '[project]\nname = "big"\nversion = "1.0.0"\n' };
    for (let i = 0; i < 12; i++) files[`data/f${i}.bin`] = randomBytes(1000 * (i + 1));
    const dir = writeTree(tempDir(), files);
    const out = join(tempDir(), 'big.zip');
    const result = await runInProcess(['pack', dir, '--out', out, '--max-size', '20kB']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'error: the archive is larger than --max-size (20,000 bytes); the largest files are:',
    );
    const listed = result.stderr
      .split('\n')
      .filter((l) => /data\/f\d+\.bin$/.test(l))
      .map((l) => l.trim().split(/\s+/).pop());
    expect(listed).toEqual([
      'data/f11.bin',
      'data/f10.bin',
      'data/f9.bin',
      'data/f8.bin',
      'data/f7.bin',
      'data/f6.bin',
      'data/f5.bin',
      'data/f4.bin',
      'data/f3.bin',
      'data/f2.bin',
    ]);
    expect(result.stderr).toContain(
      'hint: leave files out with [tool.nodereg] excludes or a .noderegignore file, or raise --max-size',
    );
    expect(existsSync(out)).toBe(false);
    expect((await runInProcess(['pack', dir, '--max-size', 'lots'])).stderr).toContain(
      '--max-size "lots" is not a size',
    );
  });

  it('warns about each Git LFS pointer it would ship in place of the file (a checkout without LFS content)', async () => {
    const pointer = (size: number) =>
      `version https://git-lfs.github.com/spec/v1\noid sha256:${'4d7a2146'.repeat(8)}\nsize ${size}\n`;
    const dir = committedRepo({
      'pyproject.toml': '[project]\nname = "lfs-node"\nversion = "1.0.0"\n[tool.comfy]\nPublisherId = "ada"\n',
      '.gitattributes':
        '*.safetensors filter=lfs diff=lfs merge=lfs -text\n*.png filter=lfs diff=lfs merge=lfs -text\n',
      'models/weights.safetensors': pointer(123456789),
      'assets/icon.png': pointer(2048),
      'notes.md': 'version https://git-lfs.github.com/spec/v1 is the pointer format\n',
    });
    const out = join(tempDir(), 'lfs.zip');
    const result = await runInProcess(['pack', dir, '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('files     5');
    const warned = result.stderr.split('\n').filter((l) => l.includes('Git LFS pointer'));
    expect(warned).toEqual([
      'warning: assets/icon.png is a Git LFS pointer, not the file itself: fetch the content with `git lfs pull` before packing (in GitHub Actions: actions/checkout with `lfs: true`)',
      'warning: models/weights.safetensors is a Git LFS pointer, not the file itself: fetch the content with `git lfs pull` before packing (in GitHub Actions: actions/checkout with `lfs: true`)',
    ]);
  });

  it('reads each file once: the packer tells the LFS pointers from the bytes it packs (strace counts the opens); validate, packing nothing, reads their first line only', async () => {
    const pointer = (size: number) =>
      `version https://git-lfs.github.com/spec/v1\noid sha256:${'4d7a2146'.repeat(8)}\nsize ${size}\n`;
    const dir = realpathSync(
      writeTree(tempDir(), {
        'pyproject.toml': '[project]\nname = "lfs-node"\nversion = "1.0.0"\n[tool.comfy]\nPublisherId = "ada"\n',
        'models/weights.safetensors': pointer(123456789),
        'nodes.py': `# ${'x'.repeat(300)}\nprint(1)\n`, // pointer-sized, not a pointer
      }),
    );
    const opens = (trace: string, file: string) =>
      readFileSync(trace, 'utf8')
        .split('\n')
        .filter((line) => line.includes(`openat(`) && line.includes(`"${join(dir, file)}"`)).length;
    for (const argv of [
      ['pack', dir, '--out', join(tempDir(), 'lfs.zip')],
      ['validate', dir, '--offline'],
    ]) {
      const trace = join(tempDir(), 'trace');
      const home = tempDir('nodereg-home-');
      const run = spawnSync(
        'strace',
        ['-f', '-o', trace, '-e', 'trace=openat', process.execPath, INSTALLED_BIN, ...argv],
        { env: cliEnv(home), encoding: 'utf8' },
      );
      expect(run.status, run.stderr).toBe(0);
      await checkHints(run.stdout, run.stderr);
      expect(run.stderr).toContain('warning: models/weights.safetensors is a Git LFS pointer, not the file itself');
      expect(run.stderr).not.toContain('nodes.py is a Git LFS pointer');
      expect({ [argv[0]]: opens(trace, 'models/weights.safetensors') }).toEqual({ [argv[0]]: 1 });
      // pack reads nodes.py once, to pack it; validate reads it for its scan (and its first line for this check)
      if (argv[0] === 'pack') expect(opens(trace, 'nodes.py')).toBe(1);
    }
  });

  it('fails, saying what git says, when git refuses to list the tracked files: a committed file .gitignore matches would be lost', async () => {
    const dir = committedRepo({
      'pyproject.toml':
        '[project]\nname = "refused"\nversion = "1.0.0"\nlicense = { file = "LICENSE.txt" }\n[tool.comfy]\nPublisherId = "ada"\n',
      '.gitignore': '*.txt\n',
      'LICENSE.txt': 'MIT',
    });
    writeFileSync(join(dir, '.git', 'index'), 'garbage'); // as a repository owned by another user: git refuses it
    const out = join(tempDir(), 'refused.zip');
    const result = await runInProcess(['pack', dir, '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      / {2}files: git could not list the tracked files, so a committed file that \.gitignore matches would be left out; fix what git says: fatal: .*index file smaller than expected/,
    );
    expect(existsSync(out)).toBe(false);
    // A repository above the project (ComfyUI's, around a node not yet a repository of its own) may not hold it: a warning, as before.
    const host = committedRepo({ 'main.py': '' });
    const node = writeTree(join(host, 'custom_nodes', 'mine'), {
      'pyproject.toml': '[project]\nname = "mine"\nversion = "1.0.0"\n',
    });
    writeFileSync(join(host, '.git', 'index'), 'garbage');
    const above = await runInProcess(['pack', node, '--out', out]);
    expect(above.code, above.stderr).toBe(0);
    expect(above.stderr).toMatch(
      /warning: git could not list the tracked files \(fatal: .*index file smaller than expected\); the file set follows the ignore files only/,
    );
    // A `.git` that is no repository at all (empty, or a submodule's `.git` file copied out) loses nothing: a warning.
    for (const stale of ['empty directory', 'dangling file']) {
      const copied = writeTree(tempDir(), {
        'pyproject.toml': '[project]\nname = "copied"\nversion = "1.0.0"\n',
        'nodes.py': '',
      });
      if (stale === 'empty directory') mkdirSync(join(copied, '.git'));
      else writeFileSync(join(copied, '.git'), 'gitdir: ../.git/modules/copied\n');
      const packed = await runInProcess(['pack', copied, '--out', out]);
      expect(packed.code, `${stale}: ${packed.stderr}`).toBe(0);
      expect(packed.stderr, stale).toContain(
        `warning: ${join(copied, '.git')} is not a git repository (fatal: not a git repository`,
      );
    }
  });

  it('--out DIR (existing, or ending in / and made) writes <id>-<version>.zip in it, as node download does; an impossible one names --out', async () => {
    const dir = demo();
    const existing = tempDir();
    const into = await runInProcess(['pack', dir, '--out', existing]);
    expect(into.code, into.stderr).toBe(0);
    expect(into.stdout).toContain(`demo-node 0.4.0 → ${join(existing, 'demo-node-0.4.0.zip')}`);
    expect(readdirSync(existing)).toEqual(['demo-node-0.4.0.zip']);
    const fresh = join(tempDir(), 'dist');
    const made = await runInProcess(['pack', dir, '--out', `${fresh}/`]);
    expect(made.code, made.stderr).toBe(0);
    expect(readdirSync(fresh)).toEqual(['demo-node-0.4.0.zip']);
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, 'x');
    const under = await runInProcess(['pack', dir, '--out', join(file, 'x.zip')]);
    expect(under.code).toBe(2);
    expect(under.stderr).toContain(
      `error: --out: cannot create the directory ${file}: ${file} is a file, not a directory\nhint: point --out at a directory you can write to\n`,
    );
    expect(under.stderr).not.toMatch(/EEXIST|ENOTDIR/);
  });

  it("names each untracked file only this machine's git settings ignore (global excludes, .git/info/exclude): it ships, as on any machine", async () => {
    const dir = committedRepo({
      'pyproject.toml':
        '[project]\nname = "machine"\nversion = "1.0.0"\n[tool.nodereg]\npublisher = "ada"\nincludes = ["web/dist"]\n',
      '.gitignore': 'web/dist/\n',
      'nodes.py': '',
    });
    writeTree(dir, {
      '.env.local': 'KEY=1',
      'scratch/notes.md': 'x',
      'new.py': '',
      'web/dist/app.js': '',
      'linked/inner.py': '',
    });
    writeFileSync(join(dir, '.git', 'info', 'exclude'), 'scratch/\n');
    execFileSync('ln', ['-s', 'linked', join(dir, 'alias')]); // a file reached through a symlink is no file of git's
    // a repository inside, committed as a gitlink without .gitmodules: git lists none of its files
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', ...args], { cwd, stdio: 'pipe' });
    writeTree(dir, { 'vendor/lib.py': '' });
    git(join(dir, 'vendor'), 'init', '-q');
    git(join(dir, 'vendor'), 'add', 'lib.py');
    git(join(dir, 'vendor'), 'commit', '-q', '--no-gpg-sign', '-m', 'lib');
    git(dir, 'add', 'vendor');
    git(dir, 'commit', '-q', '--no-gpg-sign', '-m', 'vendor');
    const home = writeTree(tempDir(), { '.config/git/ignore': '.env.local\n' }); // git's default core.excludesFile
    const out = join(tempDir(), 'machine.zip');
    // spawned: git, run by pack, reads the ignore file of its own HOME, which a run in this process cannot change
    const result = await runCli(['pack', dir, '--out', out], { home });
    expect(result.code, result.stderr).toBe(0);
    const hint =
      "it ships (the archive follows the project's ignore files only); if it should not, add it to .gitignore or .noderegignore";
    expect(result.stderr.split('\n').filter((l) => l.includes('git settings'))).toEqual([
      `warning: .env.local is ignored by this machine's git settings (core.excludesFile or .git/info/exclude), not by the project: ${hint}`,
      `warning: scratch/notes.md is ignored by this machine's git settings (core.excludesFile or .git/info/exclude), not by the project: ${hint}`,
    ]);
    expect(unzipList(out)).toEqual([
      '.env.local',
      '.gitignore',
      'alias/inner.py',
      'linked/inner.py',
      'new.py',
      'nodes.py',
      'pyproject.toml',
      'scratch/notes.md',
      'vendor/lib.py',
      'web/dist/app.js',
    ]);
  });

  it('says nothing of an untracked file in a checked-out submodule: git lists no untracked file there, whatever the machine ignores', async () => {
    const sub = committedRepo({ 'lib.py': '' });
    const dir = committedRepo({
      'pyproject.toml': '[project]\nname = "with-sub"\nversion = "1.0.0"\n[tool.nodereg]\npublisher = "ada"\n',
      'nodes.py': '',
    });
    git(dir, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub']);
    commitAll(dir);
    writeTree(dir, { 'sub/new.py': '' });
    const out = join(tempDir(), 'with-sub.zip');
    const result = await runInProcess(['pack', dir, '--out', out], { home: tempDir() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('git settings');
    expect(unzipList(out)).toEqual(['.gitmodules', 'nodes.py', 'pyproject.toml', 'sub/lib.py', 'sub/new.py']);
  });

  it('warns about a symlink that leaves the project, and packs without it', async () => {
    const outside = writeTree(tempDir(), { 'secret.txt': 'no' });
    const dir = writeTree(tempDir(), { 'pyproject.toml': '[project]\nname = "n"\nversion = "1"\n' });
    execFileSync('ln', ['-s', join(outside, 'secret.txt'), join(dir, 'leak.txt')]);
    const out = join(tempDir(), 'n.zip');
    const result = await runInProcess(['pack', dir, '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('warning: leak.txt is a symlink that leads out of the project; skipped');
    expect(unzipList(out)).toEqual(['pyproject.toml']);
  });
});
