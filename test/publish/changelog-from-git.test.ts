// `publish --changelog-from-git`: the subjects of the commits since the previous version's tag, shown
// by --dry-run and published as the version's changelog (issue 37).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { startServerWithPublisher, type TestServer } from '../helpers.js';
import { git, gitRepo } from '../package/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServerWithPublisher('gitlogpub');
});
afterAll(() => server?.close());

const env = () => ({ NODEREG_REGISTRY: server.url, NODEREG_TOKEN: server.adminToken });
const manifest = (id: string, version: string) =>
  `[project]\nname = "${id}"\nversion = "${version}"\ndescription = "x"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "gitlogpub"\n`;

/** Commits `files` with `subject`, as a test user. */
function commit(root: string, files: Record<string, string>, subject: string): void {
  for (const [path, text] of Object.entries(files)) writeFileSync(join(root, path), text);
  git(root, ['add', '-A']);
  git(root, ['-c', 'user.name=T', '-c', 'user.email=t@example.org', 'commit', '-q', '--no-gpg-sign', '-m', subject]);
}

/** A repository whose 1.0.0 is tagged v1.0.0 (0.9.0 earlier, and a stray v9.0.0 above the version published), with two commits since. */
function releasedRepo(id: string): string {
  const root = gitRepo({});
  commit(root, { 'pyproject.toml': manifest(id, '0.9.0'), '__init__.py': '' }, 'First cut');
  git(root, ['tag', 'v0.9.0']);
  git(root, ['tag', 'v9.0.0']);
  commit(root, { 'pyproject.toml': manifest(id, '1.0.0') }, 'Release 1.0.0');
  git(root, ['tag', 'v1.0.0']);
  git(root, ['tag', 'unrelated-tag']);
  commit(root, { 'nodes.py': 'a = 1\n' }, 'Add the blur node');
  commit(root, { 'pyproject.toml': manifest(id, '1.1.0') }, 'Raise the version to 1.1.0');
  return root;
}

describe('publish --changelog-from-git', () => {
  it('--dry-run shows the subjects since the previous version tag, newest first', async () => {
    const id = `gitlog-${randomBytes(3).toString('hex')}`;
    const root = releasedRepo(id);
    const result = await runInProcess(['publish', root, '--changelog-from-git', '--dry-run', '--json'], {
      env: env(),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).request.body.node_version.changelog).toBe(
      '- Raise the version to 1.1.0\n- Add the blur node',
    );
  });

  it('publishes them as the changelog', async () => {
    const id = `gitlog-${randomBytes(3).toString('hex')}`;
    const root = releasedRepo(id);
    const result = await runInProcess(['publish', root, '--changelog-from-git'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    const version = (await (await fetch(`${server.url}/nodes/${id}/versions/1.1.0`)).json()) as { changelog: string };
    expect(version.changelog).toBe('- Raise the version to 1.1.0\n- Add the blur node');
  });

  it("with no earlier version's tag, every commit, and says so; with --changelog, refused naming both", async () => {
    const id = `gitlog-${randomBytes(3).toString('hex')}`;
    const root = gitRepo({});
    commit(root, { 'pyproject.toml': manifest(id, '1.0.0'), '__init__.py': '' }, 'Start');
    commit(root, { 'nodes.py': 'a = 1\n' }, 'Add a node');
    const first = await runInProcess(['publish', root, '--changelog-from-git', '--dry-run', '--json'], {
      env: env(),
    });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('no tag of a version below 1.0.0');
    expect(JSON.parse(first.stdout).request.body.node_version.changelog).toBe('- Add a node\n- Start');
    const both = await runInProcess(['publish', root, '--changelog-from-git', '--changelog', 'x'], { env: env() });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--changelog-from-git cannot be used with --changelog');
  });
});
