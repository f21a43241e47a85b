// publish refuses files that ship but differ from the last commit, naming them, unless --allow-dirty;
// its hint runs as printed. Untracked files are listed as before; outside git there is no guard (issue 37).
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHints } from '../cli/hints.js';
import { runInProcess } from '../cli/in-process.js';
import { startServerWithPublisher, tempDir, type TestServer } from '../helpers.js';
import { committedRepo, writeTree } from '../package/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServerWithPublisher('dirtypub');
});
afterAll(() => server?.close());

const env = () => ({ NODEREG_REGISTRY: server.url, NODEREG_TOKEN: server.adminToken });

function files(id: string): Record<string, string> {
  return {
    'pyproject.toml': `[project]\nname = "${id}"\nversion = "1.0.0"\ndescription = "x"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "dirtypub"\nexcludes = ["notes/"]\n`,
    '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    'nodes.py': 'a = 1\n',
    'old.py': 'b = 1\n',
    'notes/todo.md': 'x\n',
  };
}
const nodeId = () => `dirty-${randomBytes(3).toString('hex')}`;

describe('publish from a tree that differs from HEAD', () => {
  it('is refused (exit 2), naming the changed and deleted files; the hint, run as printed, publishes', async () => {
    const id = nodeId();
    const root = committedRepo(files(id));
    writeFileSync(join(root, 'nodes.py'), 'a = 2\n');
    rmSync(join(root, 'old.py'));
    writeFileSync(join(root, 'notes/todo.md'), 'left out of the archive: not named\n');
    const refused = await runInProcess(['publish', root], { env: env() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('2 files differ from the last commit (HEAD)');
    expect(refused.stderr).toContain('nodes.py (modified), old.py (deleted)');
    expect(refused.stderr).not.toContain('notes/todo.md');
    expect((await fetch(`${server.url}/nodes/${id}`)).status).toBe(404);
    const [again] = await runHints(refused.stderr, { env: env() });
    expect(again.argv).toEqual(['publish', root, '--allow-dirty']);
    expect(again.result.code, again.result.stderr).toBe(0);
    expect((await fetch(`${server.url}/nodes/${id}/versions/1.0.0`)).status).toBe(200);
  });

  it('the hint keeps the flags that change the run (--dry-run, --publisher)', async () => {
    const root = committedRepo(files(nodeId()));
    writeFileSync(join(root, 'nodes.py'), 'a = 3\n');
    const refused = await runInProcess(['publish', '--dry-run', '--publisher', 'dirtypub'], {
      env: env(),
      cwd: root,
    });
    expect(refused.code).toBe(2);
    const [again] = await runHints(refused.stderr, { env: env(), cwd: root });
    expect(again.argv).toEqual(['publish', '--publisher', 'dirtypub', '--dry-run', '--allow-dirty']);
    expect(again.result.code, again.result.stderr).toBe(0);
    expect(again.result.stderr).toContain('dry run: nothing was sent');
  });

  it('with several nodes (--all, or dirs), the hint repeats that command line, and run as printed publishes them all', async () => {
    const ids = [nodeId(), nodeId()];
    const tree: Record<string, string> = {};
    for (const [i, id] of ids.entries())
      for (const [path, text] of Object.entries(files(id))) tree[`${['a', 'b'][i]}/${path}`] = text;
    const root = committedRepo(tree);
    writeFileSync(join(root, 'b/nodes.py'), 'a = 4\n');
    const all = await runInProcess(['publish', '--all', '--dry-run'], { env: env(), cwd: root });
    expect(all.code).toBe(2);
    expect(all.stderr).toContain('b: 1 file differs from the last commit (HEAD)');
    const [again] = await runHints(all.stderr, { env: env(), cwd: root });
    expect(again.argv).toEqual(['publish', '--all', '--dry-run', '--allow-dirty']);
    expect(again.result.code, again.result.stderr).toBe(0);
    expect(again.result.stdout).toContain('dry run of 2 nodes');
    const named = await runInProcess(['publish', 'a', 'b'], { env: env(), cwd: root });
    expect(named.code).toBe(2);
    const [republish] = await runHints(named.stderr, { env: env(), cwd: root });
    expect(republish.argv).toEqual(['publish', 'a', 'b', '--allow-dirty']);
    expect(republish.result.code, republish.result.stderr).toBe(0);
    for (const id of ids) expect((await fetch(`${server.url}/nodes/${id}/versions/1.0.0`)).status).toBe(200);
  });

  it('untracked files are listed as before, not refused; outside git there is no guard', async () => {
    const root = committedRepo(files(nodeId()));
    writeFileSync(join(root, 'extra.py'), 'c = 1\n');
    const untracked = await runInProcess(['publish', root], { env: env() });
    expect(untracked.code, untracked.stderr).toBe(0);
    expect(untracked.stderr).toContain('1 file that git does not track ships');
    const plain = writeTree(tempDir('nodereg-plain-'), files(nodeId()));
    const outside = await runInProcess(['publish', plain], { env: env() });
    expect(outside.code, outside.stderr).toBe(0);
  });
});
