// Many nodes in one repository: `publish --all` and `publish dirA dirB`, and the same for validate,
// pack and scan, in-process against a real registry on 127.0.0.1, in a git repository the test makes.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHints } from '../cli/hints.js';
import { runInProcess } from '../cli/in-process.js';
import { startServerWithPublisher, tempDir, type TestServer } from '../helpers.js';
import { committedRepo } from '../package/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServerWithPublisher('mono');
});
afterAll(() => server?.close());

const manifest = (id: string) =>
  `[project]\nname = "${id}"\nversion = "1.0.0"\ndescription = "Node ${id}"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "mono"\n`;

let counter = 0;
/** A repository of three nodes (the second with a medium scan finding), and pyproject.toml files that are no nodes or not searched. */
function monorepo() {
  const tag = `${++counter}${Date.now().toString(36)}`;
  const ids = [`alpha-${tag}`, `beta-${tag}`, `gamma-${tag}`];
  const dir = committedRepo({
    '.gitignore': 'build/\n',
    'README.md': '# nodes\n',
    'nodes/alpha/pyproject.toml': manifest(ids[0]),
    'nodes/alpha/__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    'nodes/beta/pyproject.toml': manifest(ids[1]),
    'nodes/beta/__init__.py': 'import pickle\n\ndef read(data):\n    return pickle.loads(data)\n',
    'gamma/pyproject.toml': manifest(ids[2]),
    'gamma/__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    // A Python package beside the nodes, and manifests where no search goes.
    'tools/pyproject.toml': '[project]\nname = "tools"\nversion = "0.1.0"\n',
    'web/node_modules/dep/pyproject.toml': manifest('not-a-node'),
    'build/copy/pyproject.toml': manifest('ignored-copy'),
    '.venv/pyvenv.cfg': 'home = /usr/bin\n',
    '.venv/lib/pkg/pyproject.toml': manifest('in-a-venv'),
  });
  return { dir, ids, dirs: ['gamma', 'nodes/alpha', 'nodes/beta'] };
}

const env = (extra: Record<string, string> = {}) => ({
  NODEREG_REGISTRY: server.url,
  NODEREG_TOKEN: server.adminToken,
  ...extra,
});
const status = async (id: string) => (await fetch(`${server.url}/nodes/${id}/versions/1.0.0`)).status;

describe('publish of many nodes', () => {
  it('stops before publishing any when one has a finding; --accept-findings publishes all three; --skip-existing skips all three', async () => {
    const { dir, ids, dirs } = monorepo();
    const stopped = await runInProcess(['publish', '--all', '--fail-on', 'medium'], { cwd: dir, env: env() });
    expect(stopped.code).toBe(2);
    expect(stopped.stderr).toContain('nodes/beta: the scan found 1 finding at or above medium');
    expect(stopped.stderr).toContain('nothing was published');
    for (const id of ids) expect(await status(id)).toBe(404);
    // Its hint scans the node it names, from where the run started.
    const hinted = await runHints(stopped.stderr, { cwd: dir, env: env() });
    expect(hinted.map((h) => h.argv)).toEqual([['scan', 'nodes/beta']]);
    expect(hinted[0].result.stdout).toContain('unsafe-deserialization');

    const githubOutput = join(tempDir(), 'github-output');
    writeFileSync(githubOutput, '');
    const published = await runInProcess(['publish', '--all', '--fail-on', 'medium', '--accept-findings', '--json'], {
      cwd: dir,
      env: env({ GITHUB_OUTPUT: githubOutput }),
    });
    expect(published.code).toBe(0);
    const reports = JSON.parse(published.stdout);
    expect(reports.map((r: { dir: string }) => r.dir)).toEqual(dirs);
    expect(reports.map((r: { node_id: string }) => r.node_id)).toEqual([ids[2], ids[0], ids[1]]);
    for (const r of reports) expect(r).toMatchObject({ status: 'NodeVersionStatusActive', skipped: false });
    for (const id of ids) expect(await status(id)).toBe(200);
    const lines = readFileSync(githubOutput, 'utf8').trim().split('\n');
    expect(lines.map((line) => line.slice(0, line.indexOf('=')))).toEqual([ids[2], ids[0], ids[1]]);
    expect(JSON.parse(lines[0].slice(lines[0].indexOf('=') + 1))).toEqual({
      version: '1.0.0',
      download_url: reports[0].download_url,
      archive_sha256: reports[0].archive_sha256,
      skipped: false,
    });

    const again = await runInProcess(
      ['publish', '--all', '--fail-on', 'medium', '--accept-findings', '--skip-existing'],
      {
        cwd: dir,
        env: env(),
      },
    );
    expect(again.code).toBe(0);
    expect(again.stdout.match(/^skipped: /gm)).toHaveLength(3);
    expect(again.stdout).toMatch(new RegExp(`${ids[1]}\\s+1\\.0\\.0\\s+skipped`));
  });

  it('publishes the dirs given in their order, and a failure names what was published before it', async () => {
    const { dir, ids } = monorepo();
    // gamma is published first by another run: without --skip-existing the second node stops the run.
    expect((await runInProcess(['publish', 'gamma'], { cwd: dir, env: env() })).code).toBe(0);
    const githubOutput = join(tempDir(), 'github-output');
    writeFileSync(githubOutput, '');
    const run = await runInProcess(['publish', 'nodes/alpha', 'gamma', 'nodes/beta', '--accept-findings'], {
      cwd: dir,
      env: env({ GITHUB_OUTPUT: githubOutput }),
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`gamma: ${ids[2]} 1.0.0 is already published`);
    expect(run.stderr).toContain(`already published: ${ids[0]} 1.0.0; not tried: nodes/beta`);
    expect(await status(ids[0])).toBe(200);
    expect(await status(ids[1])).toBe(404);
    // The node published before the failure is in GITHUB_OUTPUT, for a step that runs on failure.
    expect(readFileSync(githubOutput, 'utf8')).toMatch(
      new RegExp(`^${ids[0]}=\\{"version":"1\\.0\\.0",.*"skipped":false\\}\n$`),
    );
    const hinted = await runHints(run.stderr, { cwd: dir, env: env() });
    expect(hinted).toEqual([]);
  });

  it('one node given is the one-node publish: one JSON object and the GITHUB_OUTPUT lines of old', async () => {
    const { dir, ids } = monorepo();
    const githubOutput = join(tempDir(), 'github-output');
    writeFileSync(githubOutput, '');
    const run = await runInProcess(['publish', 'nodes/alpha', '--json'], {
      cwd: dir,
      env: env({ GITHUB_OUTPUT: githubOutput }),
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ node_id: ids[0], skipped: false });
    expect(readFileSync(githubOutput, 'utf8')).toMatch(
      /^version=1\.0\.0\ndownload_url=.*\narchive_sha256=.*\nskipped=false\n$/,
    );
  });
});

describe('validate, pack and scan of many nodes', () => {
  it('--all checks every node and prints one JSON array', async () => {
    const { dir, ids, dirs } = monorepo();
    const validated = await runInProcess(['validate', '--all', '--offline', '--json'], { cwd: dir, env: env() });
    expect(validated.code).toBe(0);
    expect(JSON.parse(validated.stdout).map((r: { dir: string; node_id: string }) => [r.dir, r.node_id])).toEqual([
      [dirs[0], ids[2]],
      [dirs[1], ids[0]],
      [dirs[2], ids[1]],
    ]);

    const out = tempDir();
    const packed = await runInProcess(['pack', '--all', '--out', `${out}/`, '--json'], { cwd: dir, env: env() });
    expect(packed.code).toBe(0);
    expect(JSON.parse(packed.stdout).map((r: { path: string }) => r.path)).toEqual(
      [ids[2], ids[0], ids[1]].map((id) => join(out, `${id}-1.0.0.zip`)),
    );

    // A finding at --fail-on in one node: every node is still scanned, and the run exits 1.
    const scanned = await runInProcess(
      ['scan', 'nodes/alpha', 'nodes/beta', 'gamma', '--fail-on', 'medium', '--json'],
      {
        cwd: dir,
      },
    );
    expect(scanned.code).toBe(1);
    const reports = JSON.parse(scanned.stdout);
    expect(reports.map((r: { dir: string; findings: unknown[] }) => [r.dir, r.findings.length])).toEqual([
      ['nodes/alpha', 0],
      ['nodes/beta', 1],
      ['gamma', 0],
    ]);
  });

  it('validate, pack and scan go on after a failing node: every node is reported, and the run exits with the failure', async () => {
    const { dir, ids, dirs } = monorepo();
    // Two of the three nodes break: a version that is no version, and a manifest without a name.
    writeFileSync(join(dir, 'gamma/pyproject.toml'), manifest(ids[2]).replace('version = "1.0.0"', 'version = "one"'));
    writeFileSync(join(dir, 'nodes/beta/pyproject.toml'), manifest(ids[1]).replace(`name = "${ids[1]}"\n`, ''));
    const json = await runInProcess(['validate', '--all', '--offline', '--json'], { cwd: dir, env: env() });
    expect(json.code, json.stderr).toBe(2);
    const results = JSON.parse(json.stdout) as { dir: string; node_id?: string; error?: { message: string } }[];
    expect(results.map((r) => r.dir)).toEqual(dirs);
    expect(results[0].error?.message).toMatch(/^gamma: [^]*version/);
    expect(results[1].node_id).toBe(ids[0]);
    expect(results[2].error?.message).toMatch(/^nodes\/beta: [^]*name/);

    const words = await runInProcess(['validate', ...dirs, '--offline'], { cwd: dir, env: env() });
    expect(words.code).toBe(2);
    expect(words.stderr).toContain('error: gamma:');
    expect(words.stderr).toContain('error: nodes/beta:');
    expect(words.stderr).toContain('2 of 3 nodes failed: gamma, nodes/beta');

    const packed = await runInProcess(['pack', ...dirs, '--out', `${tempDir()}/`], { cwd: dir, env: env() });
    expect(packed.code).toBe(2);
    expect(packed.stderr).toContain('2 of 3 nodes failed: gamma, nodes/beta');
  });

  it('refuses a flag that writes one file (scan --sarif, pack --out FILE) with several nodes', async () => {
    const { dir } = monorepo();
    const sarif = await runInProcess(['scan', '--all', '--sarif', 'out.sarif'], { cwd: dir });
    expect(sarif.code).toBe(2);
    expect(sarif.stderr).toContain('--sarif writes one file, which each of several nodes would overwrite');
    const packed = await runInProcess(['pack', 'gamma', 'nodes/alpha', '--out', 'node.zip'], { cwd: dir });
    expect(packed.code).toBe(2);
    expect(packed.stderr).toContain('--out FILE writes one file');
    const one = await runInProcess(['pack', 'gamma', '--out', join(tempDir(), 'node.zip')], { cwd: dir });
    expect(one.code, one.stderr).toBe(0);
  });

  it('--all in a tree without any node says so (exit 2)', async () => {
    const dir = committedRepo({ 'tools/pyproject.toml': '[project]\nname = "tools"\n' });
    const run = await runInProcess(['validate', '--all', '--offline'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--all found no pyproject.toml with [tool.nodereg] or [tool.comfy]');
    expect(await runHints(run.stderr, { cwd: dir })).toEqual([]);
  });
});
