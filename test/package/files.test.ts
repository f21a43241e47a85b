// The file set (DESIGN.md §6): git's ignore semantics checked against `git ls-files` as the oracle,
// then what is ours: .noderegignore, excludes, includes, the always-excluded names, symlinks, Unicode.
import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareUtf8, selectFiles } from '../../src/package/files.js';
import { tempDir } from '../helpers.js';
import { git, gitFiles, gitRepo, writeTree } from './fixtures.js';

const selected = (root: string, options = {}) =>
  selectFiles(root, options)
    .files.map((f) => f.path)
    .sort();

describe('ignore semantics agree with git ls-files', () => {
  const cases: Record<string, Record<string, string>> = {
    'negation re-includes a file': {
      '.gitignore': '*.log\n!keep.log\n',
      'a.log': '',
      'keep.log': '',
      'sub/b.log': '',
      'sub/keep.log': '',
      'x.txt': '',
    },
    'later patterns win': {
      '.gitignore': '!a.txt\n*.txt\n',
      'a.txt': '',
      'b.md': '',
    },
    'nested .gitignore files are scoped to their directory': {
      '.gitignore': 'top-only\n',
      'sub/.gitignore': '*.tmp\n/anchored\n',
      'a.tmp': '',
      'sub/b.tmp': '',
      'sub/deeper/c.tmp': '',
      'sub/anchored': '',
      'sub/deeper/anchored': '',
      anchored: '',
      'top-only': '',
      'sub/top-only': '',
    },
    'a deeper file overrides a shallower one': {
      '.gitignore': '*.dat\n',
      'sub/.gitignore': '!*.dat\n',
      'a.dat': '',
      'sub/b.dat': '',
      'sub/deep/c.dat': '',
    },
    'directory patterns match directories only': {
      '.gitignore': 'build/\nlogs\n',
      'build/x': '',
      'sub/build/y': '',
      'notdir/build': '',
      'logs/1': '',
      'sub/logs': '',
    },
    'nothing is re-included under an excluded directory': {
      '.gitignore': 'out/\n!out/keep.txt\n',
      'out/keep.txt': '',
      'out/drop.txt': '',
      'src/a.py': '',
    },
    'a file inside an excluded directory cannot re-include': {
      '.gitignore': 'vendor\n',
      'vendor/.gitignore': '!*\n',
      'vendor/lib.py': '',
      'main.py': '',
    },
    'a directory re-included by a deeper file keeps its contents': {
      '.gitignore': 'a/b/\n',
      'a/.gitignore': '!b/\n',
      'a/b/x': '',
      'a/b/c/y': '',
      'a/z': '',
    },
    'contents of a directory excluded by star can be re-included': {
      '.gitignore': 'data/*\n!data/keep/\n',
      'data/keep/a': '',
      'data/drop/b': '',
      'data/c': '',
    },
    'anchored patterns': {
      '.gitignore': '/root.txt\ndocs/*.md\n',
      'root.txt': '',
      'sub/root.txt': '',
      'docs/a.md': '',
      'docs/deep/b.md': '',
      'sub/docs/c.md': '',
    },
    'double star': {
      '.gitignore': '**/cache\nlogs/**\na/**/z.txt\n**/*.bak\n',
      'cache/1': '',
      'x/y/cache/2': '',
      'logs/a/b': '',
      'a/z.txt': '',
      'a/b/c/z.txt': '',
      'b/z.txt': '',
      'q/r.bak': '',
      keep: '',
    },
    'comments, blank lines, escapes and trailing spaces': {
      '.gitignore': '# comment\n\n\\#hash\n\\!bang\nspace\\ \ntrail   \n',
      '#hash': '',
      '!bang': '',
      'space ': '',
      trail: '',
      ok: '',
    },
    'character classes and question marks': {
      '.gitignore': 'file[0-2].txt\n?.md\n',
      'file1.txt': '',
      'file5.txt': '',
      'a.md': '',
      'ab.md': '',
    },
    'matching is case-sensitive': {
      '.gitignore': 'Readme.txt\n',
      'Readme.txt': '',
      'README.txt': '',
    },
    'non-ASCII names and patterns': {
      '.gitignore': 'é*.tmp\n日本/\n',
      'été.tmp': '',
      'café.txt': '',
      '日本/語.txt': '',
      '日本語.txt': '',
      '🎉/ok.txt': '',
      'emoji-🚀.py': '',
    },
  };

  it.each(Object.entries(cases))('%s', (_name, files) => {
    const root = gitRepo(files);
    expect(selected(root)).toEqual(gitFiles(root));
  });

  // Each of its runs starts two git processes (selectFiles' ls-files and the oracle's): its own time
  // limit, wider than the suite's, since it waits on processes rather than on a stall.
  it('agrees on random trees and ignore files (property, fixed seed)', { timeout: 120_000 }, () => {
    const segment = fc.constantFrom('a', 'b', 'c', 'd.txt', 'e.log', 'f.py', 'build', 'x y', 'é');
    const filePath = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
    const pattern = fc.oneof(
      fc.constantFrom(
        '*.log',
        '!*.log',
        '*.txt',
        '!d.txt',
        'build/',
        'build',
        '/a',
        'a/',
        '!a/',
        'b/*',
        '!b/c',
        '**/c',
        'a/**/d.txt',
        '!/a/b',
        'b/',
        '!b/',
        '*',
        '!*/',
        '!f.py',
        'c/**',
        '[ab]',
        '?',
        'x\\ y',
        'é',
        '!é',
        '/*/c',
        'a/b/',
        '**/b/',
        '!**/d.txt',
        'a/*/',
        '/b/',
        '*/',
        '**',
        '[!a]',
        'b/**/',
        '!/*',
        '*.*',
      ),
      segment,
      segment.map((s) => `!${s}`),
      segment.map((s) => `${s}/`),
      segment.map((s) => `!${s}/`),
      fc.tuple(segment, segment).map(([a, b]) => `${a}/${b}/`),
    );
    // Ignore files go into directories the tree has, so that nested scoping is exercised.
    const tree = fc.uniqueArray(filePath, { minLength: 1, maxLength: 12 }).chain((files) => {
      const dirs = [
        '',
        ...new Set(
          files.flatMap((f) =>
            f
              .split('/')
              .slice(0, -1)
              .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
          ),
        ),
      ];
      const ignores = fc.array(fc.tuple(fc.constantFrom(...dirs), fc.array(pattern, { minLength: 1, maxLength: 5 })), {
        minLength: 1,
        maxLength: 5,
      });
      return fc.record({ files: fc.constant(files), ignores });
    });
    // One repository for every run (nothing is ever added to it): each run empties its work tree.
    const root = tempDir('nodereg-prop-');
    git(root, ['init', '-q']);
    fc.assert(
      fc.property(tree, ({ files, ignores }) => {
        for (const entry of readdirSync(root)) if (entry !== '.git') rmSync(join(root, entry), { recursive: true });
        // A path cannot be both a file and a directory: the first one listed wins.
        const made: string[] = [];
        for (const path of files) {
          const clash = made.some((m) => m.startsWith(`${path}/`) || path.startsWith(`${m}/`));
          if (clash) continue;
          writeTree(root, { [path]: path });
          made.push(path);
        }
        for (const [dir, patterns] of ignores) {
          const file = dir ? `${dir}/.gitignore` : '.gitignore';
          if (made.some((m) => m === dir || dir.startsWith(`${m}/`) || m === file)) continue;
          writeTree(root, { [file]: `${patterns.join('\n')}\n` });
        }
        expect(selected(root)).toEqual(gitFiles(root));
      }),
      { numRuns: 150, seed: 20261122 },
    );
  });
});

describe('compareUtf8', () => {
  it('orders as the UTF-8 bytes do, surrogate pairs and characters past them included (property, fixed seed)', () => {
    // Characters around the surrogates, where UTF-16 order and UTF-8 order part.
    const char = fc.constantFrom(
      'a',
      'b',
      '/',
      '.',
      'é',
      '\u07ff',
      '\ud7ff',
      '\ue000',
      '\uffff',
      '\u{10000}',
      '\u{1f600}',
      '\u{10ffff}',
    );
    const name = fc.array(char, { maxLength: 6 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(name, name, (a, b) => {
        expect(compareUtf8(a, b)).toBe(Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))));
      }),
      { numRuns: 2000, seed: 20261125 },
    );
  });
});

describe('what nodereg adds to git semantics', () => {
  it('leaves out the always-excluded names wherever they are', () => {
    const root = writeTree(tempDir(), {
      'ok.py': '',
      '.git/config': '',
      '.hg/x': '',
      '.svn/x': '',
      'sub/__pycache__/m.cpython-312.pyc': '',
      'sub/old.pyc': '',
      '.venv/bin/python': '',
      'web/node_modules/x/index.js': '',
      'web/app.js': '',
    });
    expect(selected(root)).toEqual(['ok.py', 'web/app.js']);
  });

  it('applies .noderegignore files (nested, same syntax) and excludes', () => {
    const root = writeTree(tempDir(), {
      '.noderegignore': 'tests/\n*.md\n!README.md\n',
      'docs/.noderegignore': '*.png\n',
      'README.md': '',
      'CHANGES.md': '',
      'tests/t.py': '',
      'docs/a.png': '',
      'b.png': '',
      'main.py': '',
      'notes.txt': '',
      'x/notes.txt': '',
    });
    expect(selected(root, { excludes: ['/notes.txt'] })).toEqual([
      '.noderegignore',
      'README.md',
      'b.png',
      'docs/.noderegignore',
      'main.py',
      'x/notes.txt',
    ]);
  });

  it('forces includes in even when gitignored, but .noderegignore and excludes still apply', () => {
    const root = gitRepo({
      '.gitignore': 'dist/\n*.map\n',
      '.noderegignore': 'dist/secret.txt\n',
      'dist/app.js': '',
      'dist/app.js.map': '',
      'dist/secret.txt': '',
      'dist/debug.log': '',
      'dist/sub/x.js': '',
      'web/build/a.js': '',
      'web/build/b.js': '',
      'src.py': '',
    });
    expect(selected(root, { includes: ['dist', './web/build/a.js'], excludes: ['*.log'] })).toEqual([
      '.gitignore',
      '.noderegignore',
      'dist/app.js',
      'dist/app.js.map',
      'dist/sub/x.js',
      'src.py',
      'web/build/a.js',
      'web/build/b.js',
    ]);
  });

  it('reaches an include under a gitignored directory without taking its siblings', () => {
    const root = gitRepo({
      '.gitignore': 'build/\n',
      'build/web/app.js': '',
      'build/web/other.js': '',
      'build/tmp/x': '',
      'a.py': '',
    });
    expect(selected(root, { includes: ['build/web/app.js'] })).toEqual(['.gitignore', 'a.py', 'build/web/app.js']);
  });

  it('refuses includes outside the project, and warns of ones that match nothing (as the incumbent does)', () => {
    const root = writeTree(tempDir(), { 'a.py': '', 'node_modules/x.js': '' });
    const set = selectFiles(root, { includes: ['missing', '../escape', 'node_modules/x.js'] });
    expect(set.problems).toEqual([
      { key: '[tool.nodereg] includes', message: '"../escape" must be a path inside the project' },
    ]);
    expect(set.warnings.join('\n')).toMatch(
      /\[tool\.nodereg\] includes: "missing" matches nothing[\s\S]*"node_modules\/x.js" matches nothing/,
    );
  });

  it('reads an include with a leading / from the root, as the incumbent does', () => {
    const root = gitRepo({ '.gitignore': 'web/dist/\n', 'web/dist/app.js': '', 'a.py': '' });
    const set = selectFiles(root, { includes: ['/web/dist'] });
    expect(set.problems).toEqual([]);
    expect(set.files.map((f) => f.path)).toContain('web/dist/app.js');
  });

  it('keeps any Unicode name exactly, NFC and NFD alike, sorted by UTF-8 bytes', () => {
    const nfc = 'caf\u00e9.txt';
    const nfd = 'cafe\u0301.txt';
    const root = writeTree(tempDir(), {
      [nfc]: '1',
      [nfd]: '2',
      '日本語/ファイル.py': '',
      '🎉.md': '',
      'z.txt': '',
      '\uff5e.txt': '',
    });
    const paths = selectFiles(root).files.map((f) => f.path);
    expect(paths).toEqual(['cafe\u0301.txt', 'caf\u00e9.txt', 'z.txt', '日本語/ファイル.py', '\uff5e.txt', '🎉.md']);
  });

  it('names a file whose name is not UTF-8 as such (it cannot go into an archive), not as a broken symlink', () => {
    const root = writeTree(tempDir(), { 'a.py': '' });
    writeFileSync(Buffer.concat([Buffer.from(`${root}/caf`), Buffer.from([0xe9]), Buffer.from('.py')]), 'x');
    const set = selectFiles(root);
    expect(set.files.map((f) => f.path)).toEqual(['a.py']);
    expect(set.warnings).toEqual([
      'caf\ufffd.py: its name is not valid UTF-8, which an archive name must be; skipped (rename it)',
    ]);
  });

  it('follows symlinks inside the root and skips, with a warning, those that leave it', () => {
    const outside = writeTree(tempDir(), { 'secret.txt': 'no' });
    const root = writeTree(tempDir(), { 'real/a.txt': 'a', 'b.txt': 'b' });
    symlinkSync(join(root, 'real'), join(root, 'linked-dir'));
    symlinkSync('b.txt', join(root, 'linked-file.txt'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'escape.txt'));
    symlinkSync(outside, join(root, 'escape-dir'));
    symlinkSync('nowhere', join(root, 'broken'));
    symlinkSync('..', join(root, 'real/up'));
    const set = selectFiles(root);
    expect(set.files.map((f) => f.path)).toEqual(['b.txt', 'linked-dir/a.txt', 'linked-file.txt', 'real/a.txt']);
    expect(set.warnings.join('\n')).toMatch(/escape\.txt is a symlink that leads out of the project/);
    expect(set.warnings.join('\n')).toMatch(/escape-dir is a symlink that leads out of the project/);
    expect(set.warnings.join('\n')).toMatch(/broken is a broken symlink/);
    expect(set.warnings.join('\n')).toMatch(/real\/up is a symlink to a directory that contains it/);
  });

  it('includes submodule contents, with the submodule keeping its own ignore rules', () => {
    const sub = gitRepo({ 'lib.py': 'x', '.gitignore': '*.cache\n', 'skip.cache': '' });
    git(sub, ['add', '.']);
    git(sub, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init']);
    const root = gitRepo({ '.gitignore': '*.txt\n', 'main.py': '' });
    git(root, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'vendor/sub']);
    writeFileSync(join(root, 'vendor/sub/notes.txt'), 'kept: the outer .gitignore does not reach into the submodule');
    expect(selected(root)).toEqual([
      '.gitignore',
      '.gitmodules',
      'main.py',
      'vendor/sub/.gitignore',
      'vendor/sub/lib.py',
      'vendor/sub/notes.txt',
    ]);
  });

  it("never includes the pack output, an earlier pack of the node anywhere, nor the incumbent's node.zip at the root", () => {
    const root = writeTree(tempDir(), {
      'a.py': '',
      'out/me.zip': '',
      'my-node-1.0.0.zip': '',
      'my-node-assets.zip': '',
      'sub/my-node-1.0.0.zip': '',
      'dist/my-node-2.1.0-rc.1.zip': '',
      'node.zip': '',
      'sub/node.zip': '',
      'other-node-1.0.0.zip': '',
    });
    expect(selected(root, { skip: [join(root, 'out/me.zip')], nodeId: 'my-node' })).toEqual([
      'a.py',
      'my-node-assets.zip',
      'other-node-1.0.0.zip',
      'sub/node.zip',
    ]);
  });

  it('marks executables 0755 and other files 0644', () => {
    const root = writeTree(tempDir(), { 'run.sh': '#!/bin/sh\n', 'a.py': '' });
    mkdirSync(join(root, 'bin'));
    writeFileSync(join(root, 'bin/tool'), '', { mode: 0o750 });
    const modes = Object.fromEntries(selectFiles(root).files.map((f) => [f.path, f.mode]));
    expect(modes).toEqual({ 'a.py': 0o644, 'bin/tool': 0o755, 'run.sh': 0o644 });
  });
});
