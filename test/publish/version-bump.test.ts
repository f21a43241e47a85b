// `nodereg version bump`: the version raised where the manifest keeps it, each of the three places,
// and not one other byte of the file changed; `--git` commits and tags from a clean tree only (issue 37).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { commitAll, git, gitRepo } from '../package/fixtures.js';

/** A repository with `files` committed, where git may commit in the CLI's runs too. */
function repo(files: Record<string, string>): string {
  const root = gitRepo(files);
  for (const [key, value] of [
    ['user.name', 'Test'],
    ['user.email', 'test@example.org'],
    ['commit.gpgsign', 'false'],
    ['tag.gpgsign', 'false'],
  ])
    git(root, ['config', key, value]);
  return commitAll(root);
}

// Comments, odd spacing, CRLF-free but unusual layouts: all must survive as they are.
const PROJECT_STYLE = `# my node
[project]
name    = "bump-node"   # the id
description = """
version = "9.9.9"
"""
version =   "1.2.3"     # bumped by nodereg
license = { text = "MIT" }

[tool.nodereg]
publisher = "acme"  # same publisher
`;
const TOOL_STYLE = `[project]
name = "bump-node"
version = "0.0.1"   # not this one: [tool.nodereg] wins
description = "x"

[tool . nodereg]
# the version nodereg publishes
version = '2.0.0-rc.1'
publisher = "acme"
`;
const FILE_STYLE = `[project]
name = "bump-node"
dynamic = ["version"]
description = "x"

[tool.comfy]
PublisherId = "acme"

[tool.comfy.version]
path = "bump_node/_version.py"
`;
const VERSION_FILE = `"""The version."""\n# keep me\n__version__ = "0.9.0"  # set by release\nOTHER = "0.9.0"\n`;

describe('nodereg version bump', () => {
  it('[project] version: only the version changes, comments, spacing and look-alike strings kept', async () => {
    const root = repo({ 'pyproject.toml': PROJECT_STYLE });
    const result = await runInProcess(['version', 'bump', 'patch'], { cwd: root });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('1.2.3 → 1.2.4');
    expect(readFileSync(join(root, 'pyproject.toml'), 'utf8')).toBe(
      PROJECT_STYLE.replace('version =   "1.2.3"', 'version =   "1.2.4"'),
    );
    const minor = await runInProcess(['version', 'bump', 'minor', root, '--json']);
    expect(JSON.parse(minor.stdout)).toMatchObject({ from: '1.2.4', to: '1.3.0', key: '[project] version' });
  });

  it('[tool.nodereg] version: a pre-release counts up, then ends in its release', async () => {
    const root = repo({ 'pyproject.toml': TOOL_STYLE });
    const pre = await runInProcess(['version', 'bump', 'prerelease', '--json'], { cwd: root });
    expect(pre.code, pre.stderr).toBe(0);
    expect(JSON.parse(pre.stdout)).toMatchObject({ from: '2.0.0-rc.1', to: '2.0.0-rc.2' });
    expect(readFileSync(join(root, 'pyproject.toml'), 'utf8')).toBe(TOOL_STYLE.replace("'2.0.0-rc.1'", "'2.0.0-rc.2'"));
    const release = await runInProcess(['version', 'bump', 'patch'], { cwd: root });
    expect(release.code, release.stderr).toBe(0);
    expect(readFileSync(join(root, 'pyproject.toml'), 'utf8')).toBe(TOOL_STYLE.replace("'2.0.0-rc.1'", "'2.0.0'"));
  });

  it('[tool.comfy.version] path: the version file changes in its string alone; pyproject.toml not at all', async () => {
    const root = repo({ 'pyproject.toml': FILE_STYLE, 'bump_node/_version.py': VERSION_FILE });
    const result = await runInProcess(['version', 'bump', 'major'], { cwd: root });
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(root, 'pyproject.toml'), 'utf8')).toBe(FILE_STYLE);
    expect(readFileSync(join(root, 'bump_node/_version.py'), 'utf8')).toBe(
      VERSION_FILE.replace('__version__ = "0.9.0"', '__version__ = "1.0.0"'),
    );
    const validate = await runInProcess(['validate', '--offline', '--json'], { cwd: root });
    expect(JSON.parse(validate.stdout).version).toBe('1.0.0');
  });

  it('--dry-run shows the line before and after, and writes nothing', async () => {
    const root = repo({ 'pyproject.toml': PROJECT_STYLE });
    const result = await runInProcess(['version', 'bump', 'prerelease', '--preid', 'beta', '--dry-run'], {
      cwd: root,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('- version =   "1.2.3"     # bumped by nodereg');
    expect(result.stdout).toContain('+ version =   "1.2.4-beta.1"     # bumped by nodereg');
    expect(result.stderr).toContain('dry run: nothing was written');
    expect(readFileSync(join(root, 'pyproject.toml'), 'utf8')).toBe(PROJECT_STYLE);
  });

  it('a label pip does not read is refused for [project] version, naming --preid', async () => {
    const root = repo({ 'pyproject.toml': PROJECT_STYLE });
    const result = await runInProcess(['version', 'bump', 'prerelease', '--preid', 'next'], { cwd: root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--preid next');
    expect(readFileSync(join(root, 'pyproject.toml'), 'utf8')).toBe(PROJECT_STYLE);
  });

  it('--git commits the version alone and tags it v1.2.4', async () => {
    const root = repo({ 'pyproject.toml': PROJECT_STYLE, 'notes.txt': 'x' });
    const result = await runInProcess(['version', 'bump', 'patch', '--git', '--json'], { cwd: root });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ to: '1.2.4', tag: 'v1.2.4' });
    expect(git(root, ['status', '--porcelain'])).toBe('');
    expect(git(root, ['log', '-1', '--format=%s'])).toBe('v1.2.4\n');
    expect(git(root, ['show', '--name-only', '--format=', 'HEAD'])).toBe('pyproject.toml\n');
    expect(git(root, ['describe', '--exact-match', 'HEAD'])).toBe('v1.2.4\n');
  });

  it('--git refuses a tree with changes, naming the files, and writes nothing', async () => {
    const root = repo({ 'pyproject.toml': PROJECT_STYLE, 'nodes.py': 'a = 1\n' });
    writeFileSync(join(root, 'nodes.py'), 'a = 2\n');
    const result = await runInProcess(['version', 'bump', 'patch', '--git'], { cwd: root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('nodes.py (modified)');
    expect(readFileSync(join(root, 'pyproject.toml'), 'utf8')).toBe(PROJECT_STYLE);
    expect(git(root, ['tag'])).toBe('');
  });
});
