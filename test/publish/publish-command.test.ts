// nodereg publish as a user and a CI job run it: the CLI in-process (spawned where a test stops it
// with a signal) against a real registry on 127.0.0.1. A small forwarding proxy (ours, on 127.0.0.1) stands between them where a test needs
// an upload to fail.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/program.js';
import { checkHints } from '../cli/hint-check.js';
import { runInProcess } from '../cli/in-process.js';
import { cliEnv, INSTALLED_BIN, startServer, tempDir, type TestServer } from '../helpers.js';
import { committedRepo, writeTree } from '../package/fixtures.js';

let server: TestServer;
let proxy: Proxy;

beforeAll(async () => {
  proxy = await startProxy();
  server = await startServer({ publicUrl: proxy.url });
  proxy.target = server.url;
  await createPublisher(server, 'acme');
});
afterAll(async () => {
  await server?.close();
  await proxy?.close();
});

async function createPublisher(s: TestServer, id: string): Promise<void> {
  const response = await fetch(`${s.url}/publishers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id, name: id }),
  });
  expect(response.status).toBe(201);
}

let counter = 0;
/** A node project in a git repo, with files that the ignore rules must leave out. */
function project(options: { publisher?: string; version?: string; extra?: Record<string, string | Buffer> } = {}) {
  const id = `node-${++counter}-${randomBytes(3).toString('hex')}`;
  const dir = committedRepo({
    'pyproject.toml': `[project]\nname = "${id}"\nversion = "${options.version ?? '1.0.0'}"\ndescription = "A test node"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "${options.publisher ?? 'acme'}"\ntags = ["test"]\n`,
    '.gitignore': 'build/\n*.log\n',
    LICENSE: 'MIT',
    '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    'nodes/été.py': '# é\n',
    'web/🎨.png': randomBytes(3000),
    'build/artifact.bin': 'ignored',
    'run.log': 'ignored',
    '__pycache__/m.pyc': 'never',
    ...options.extra,
  });
  return { id, dir };
}

const env = (extra: Record<string, string | undefined> = {}) => ({
  NODEREG_REGISTRY: server.url,
  NODEREG_TOKEN: server.adminToken,
  ...extra,
});

const getVersion = (nodeId: string, version: string) => fetch(`${server.url}/nodes/${nodeId}/versions/${version}`);

describe('nodereg publish', () => {
  it('publishes, and the downloaded archive is the local pack, holding exactly the selected files', async () => {
    const { id, dir } = project();
    const githubOutput = join(tempDir(), 'github-output');
    writeFileSync(githubOutput, 'earlier=line\n');
    const result = await runInProcess(['publish', dir, '--json', '--changelog', 'First release'], {
      env: env({ GITHUB_OUTPUT: githubOutput }),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(Object.keys(report)).toEqual([
      'publisher_id',
      'node_id',
      'version',
      'status',
      'download_url',
      'archive_sha256',
      'archive_size',
      'files',
      'skipped',
    ]);
    expect(report).toMatchObject({
      publisher_id: 'acme',
      node_id: id,
      version: '1.0.0',
      status: 'NodeVersionStatusActive',
      files: 6,
      skipped: false,
    });
    expect(report.download_url).toBe(`${proxy.url}/archives/acme/${id}/1.0.0/node.zip`);

    const downloaded = Buffer.from(await (await fetch(report.download_url)).arrayBuffer());
    expect(createHash('sha256').update(downloaded).digest('hex')).toBe(report.archive_sha256);
    expect(downloaded.length).toBe(report.archive_size);
    const local = join(tempDir(), 'local.zip');
    expect((await runInProcess(['pack', dir, '--out', local])).code).toBe(0);
    expect(downloaded.equals(readFileSync(local))).toBe(true);
    const names = execFileSync('unzip', ['-Z1', local], { encoding: 'utf8' }).trim().split('\n');
    expect(names).toEqual(['.gitignore', 'LICENSE', '__init__.py', 'nodes/été.py', 'pyproject.toml', 'web/🎨.png']);

    const version = await (await getVersion(id, '1.0.0')).json();
    expect(version).toMatchObject({ changelog: 'First release', archive_sha256: report.archive_sha256 });
    const node = await (await fetch(`${server.url}/nodes/${id}`)).json();
    expect(node).toMatchObject({ id, name: id, description: 'A test node', license: 'LICENSE', tags: ['test'] });

    expect(readFileSync(githubOutput, 'utf8')).toBe(
      `earlier=line\nversion=1.0.0\ndownload_url=${report.download_url}\narchive_sha256=${report.archive_sha256}\nskipped=false\n`,
    );
    // The token went in the Authorization header only, and never to the upload URL.
    expect(proxy.putAuthorizations).not.toContain(server.adminToken);
  });

  it('reports in words without --json', async () => {
    const { id, dir } = project({ version: '2.1rc1' });
    const result = await runInProcess(['publish'], { cwd: dir, env: env() });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^${id} 2\\.1\\.0-rc\\.1 published by acme \\(active\\)\\n`));
    expect(result.stdout).toMatch(
      /^download\s+http:\/\/127\.0\.0\.1:\d+\/archives\/acme\/.*\/2\.1\.0-rc\.1\/node\.zip$/m,
    );
    expect(result.stdout).toMatch(/^sha256\s+[0-9a-f]{64}$/m);
    expect(result.stdout).toMatch(/^size\s+[\d.]+ KiB, 6 files$/m);
  });

  it('--dry-run prints the body and the file list, sends nothing, and needs no token', async () => {
    const { id, dir } = project();
    const before = proxy.requests.length;
    const result = await runInProcess(['publish', dir, '--dry-run'], { env: { NODEREG_REGISTRY: server.url } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `POST ${server.url}/publishers/acme/nodes/${id}/versions\n{\n  "node": {\n    "id": "${id}",`,
    );
    expect(result.stdout).toMatch(/^\s+\S+ B\s+nodes\/été\.py$/m);
    expect(result.stderr).toContain('dry run: nothing was sent');
    expect((await getVersion(id, '1.0.0')).status).toBe(404);
    expect((await fetch(`${server.url}/nodes/${id}`)).status).toBe(404);
    expect(proxy.requests.length).toBe(before);

    const json = await runInProcess(['publish', dir, '--dry-run', '--json'], { env: env() });
    const body = JSON.parse(json.stdout);
    expect(body).toMatchObject({
      dry_run: true,
      publisher_id: 'acme',
      node_id: id,
      version: '1.0.0',
      files: 6,
      request: { method: 'POST' },
    });
    expect(Object.keys(body.request.body)).toEqual(['node', 'node_version']);
    expect(json.stdout).not.toContain(server.adminToken);
  });

  it('a version that exists is exit 3 with a hint; --skip-existing is exit 0 for the same archive, exit 3 for another', async () => {
    const { id, dir } = project();
    expect((await runInProcess(['publish', dir], { env: env() })).code).toBe(0);

    const again = await runInProcess(['publish', dir], { env: env() });
    expect(again.code).toBe(3);
    expect(again.stderr).toContain(`error: ${id} 1.0.0 is already published on ${server.url}`);
    expect(again.stderr).toContain('hint: bump the version in pyproject.toml, or pass --skip-existing');

    const githubOutput = join(tempDir(), 'github-output');
    const skipped = await runInProcess(['publish', dir, '--skip-existing', '--json'], {
      env: env({ GITHUB_OUTPUT: githubOutput }),
    });
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).not.toContain('differs');
    expect(JSON.parse(skipped.stdout)).toMatchObject({
      node_id: id,
      version: '1.0.0',
      status: 'NodeVersionStatusActive',
      skipped: true,
    });
    expect(readFileSync(githubOutput, 'utf8')).toMatch(
      /^version=1\.0\.0\ndownload_url=http.+\narchive_sha256=[0-9a-f]{64}\nskipped=true\n$/,
    );

    writeFileSync(join(dir, 'new.py'), 'changed = True\n');
    const changed = await runInProcess(['publish', dir, '--skip-existing'], { env: env() });
    expect(changed.code).toBe(3);
    expect(changed.stdout).toBe('');
    expect(changed.stderr).toContain(
      'warning: 1 file that git does not track ships (the incumbent client packed only committed files): new.py;',
    );
    expect(changed.stderr).toMatch(
      new RegExp(
        `(^|\n)error: ${id} 1\\.0\\.0 is already published on ${server.url} with another archive \\(published sha256 [0-9a-f]{64}, local [0-9a-f]{64}\\)\n`,
      ),
    );
    expect(changed.stderr).toContain(
      'hint: bump the version in pyproject.toml and publish that; --skip-existing skips only a version published with the same files',
    );
  });

  it('a bad token is exit 4 with a hint naming NODEREG_TOKEN; no token at all too', async () => {
    const { dir } = project();
    const bad = await runInProcess(['publish', dir], { env: env({ NODEREG_TOKEN: 'nrg_u_not-a-real-token' }) });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/hint: .*NODEREG_TOKEN/);
    expect(bad.stderr).not.toContain('nrg_u_not-a-real-token');
    const none = await runInProcess(['publish', dir], { env: env({ NODEREG_TOKEN: undefined }) });
    expect(none.code).toBe(4);
    expect(none.stderr).toMatch(/hint: .*NODEREG_TOKEN/);
  });

  it('an unreachable registry is exit 1, naming its URL', async () => {
    const down = await closedPortUrl();
    const { dir } = project();
    // no retry window: the short retries of a wrong URL are tested in ci-exit-codes.test.ts
    const result = await runInProcess(['publish', dir], {
      env: env({ NODEREG_REGISTRY: down, NODEREG_RETRY_WINDOW: '0' }),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot reach ${down}/`);
  });

  it('an upload that fails once is retried, reading the file again, and succeeds', async () => {
    const { id, dir } = project({ extra: { 'data.bin': randomBytes(200_000) } });
    proxy.failPuts = 1;
    const puts = proxy.putSizes.length;
    const result = await runInProcess(['publish', dir, '--json', '--verbose'], { env: env() });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/upload attempt 1 failed/);
    expect(proxy.putSizes.length - puts).toBe(2);
    const [first, second] = proxy.putSizes.slice(-2);
    expect(second).toBe(JSON.parse(result.stdout).archive_size);
    expect(first).toBeGreaterThan(0);
    expect((await getVersion(id, '1.0.0')).status).toBe(200);
  });

  it('an upload that keeps failing names the command to resume, and running it again succeeds', async () => {
    const { id, dir } = project();
    proxy.errorPuts = 3;
    const failed = await runInProcess(['publish', dir, '--changelog', "it's fixed"], { env: env() });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(new RegExp(`error: uploading the archive of ${id} 1\\.0\\.0 failed: `));
    expect(failed.stderr).toContain(`${id} 1.0.0 is registered on ${server.url} without its archive (pending)`);
    expect(failed.stderr).toContain(
      `hint: finish it with \`nodereg publish ${dir} --skip-existing --changelog 'it'\\''s fixed'\` (it gets a fresh upload URL`,
    );
    const resumed = await runInProcess(['publish', dir, '--changelog', "it's fixed", '--json'], { env: env() });
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ version: '1.0.0', status: 'NodeVersionStatusActive' });
  });

  it('the resume hint keeps the profile and the scan flags of the run, and run as printed it finishes', async () => {
    const { id, dir } = project({
      extra: { 'loader.py': 'import pickle\n\ndef read(data):\n    return pickle.loads(data)\n' },
    });
    const home = tempDir('nodereg-home-');
    const saved = await runInProcess(['login', '--profile', 'ci', '--token', server.adminToken], {
      env: { NODEREG_REGISTRY: server.url },
      home,
    });
    expect(saved.code, saved.stderr).toBe(0);
    proxy.errorPuts = 3;
    const argv = ['publish', dir, '--profile', 'ci', '--fail-on', 'medium', '--accept-findings'];
    const failed = await runInProcess(argv, { env: {}, home });
    expect(failed.code, failed.stderr).toBe(1);
    const resume = /hint: finish it with `nodereg ([^`]+)`/.exec(failed.stderr)?.[1];
    expect(resume).toBe(`publish ${dir} --skip-existing --profile ci --fail-on medium --accept-findings`);
    const resumed = await runInProcess(resume!.split(' '), { env: {}, home });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await (await getVersion(id, '1.0.0')).json()).toMatchObject({ status: 'NodeVersionStatusActive' });
  });

  it('a missing publisher is exit 5 with the command that creates it, or created with --create-publisher', async () => {
    const publisher = `new-${randomBytes(3).toString('hex')}`;
    const { id, dir } = project({ publisher });
    const missing = await runInProcess(['publish', dir], { env: env() });
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain(`error: publisher "${publisher}" does not exist on ${server.url}`);
    expect(missing.stderr).toContain(
      `hint: create it with \`nodereg publisher create ${publisher}\`, or publish with --create-publisher`,
    );

    const created = await runInProcess(['publish', dir, '--create-publisher', '--json'], { env: env() });
    expect(created.code).toBe(0);
    expect(created.stderr).toContain(`created publisher ${publisher}`);
    expect(JSON.parse(created.stdout)).toMatchObject({ publisher_id: publisher, node_id: id });
    expect((await fetch(`${server.url}/publishers/${publisher}`)).status).toBe(200);
  });

  it('--publisher overrides the manifest, and the changelog can come from stdin', async () => {
    await createPublisher(server, 'other-team');
    const { id, dir } = project();
    const result = await runInProcess(['publish', dir, '--publisher', 'other-team', '--changelog-file', '-'], {
      env: env(),
      input: '## 1.0.0\n- piped in\n',
    });
    expect(result.code).toBe(0);
    expect(await (await getVersion(id, '1.0.0')).json()).toMatchObject({ changelog: '## 1.0.0\n- piped in\n' });
    expect(
      ((await (await fetch(`${server.url}/nodes/${id}`)).json()) as { publisher?: unknown }).publisher,
    ).toMatchObject({ id: 'other-team' });
  });

  it('a bad project fails before anything is sent', async () => {
    const dir = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "x"\nversion = "1.0.post1"\n[tool.nodereg]\npublisher = "acme"\n',
    });
    const before = proxy.requests.length;
    const result = await runInProcess(['publish', dir], { env: env({ NODEREG_REGISTRY: proxy.url }) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('[project] version: "1.0.post1" is a post-release');
    expect(proxy.requests.length).toBe(before);
  });
});

describe('publish to a registry with a smaller archive limit', () => {
  it('fails before any version exists (exit 2): the node is not created, and the message says how to proceed', async () => {
    const small = await startServer({ maxArchive: 20_000 });
    try {
      await createPublisher(small, 'acme');
      const { id, dir } = project({ extra: { 'big.bin': randomBytes(200_000) } });
      // validate asks the registry for its limits, and says the same before anything is sent
      const validated = await runInProcess(['validate', dir], { env: { NODEREG_REGISTRY: small.url } });
      expect(validated.code).toBe(2);
      expect(validated.stderr).toMatch(
        new RegExp(
          `error: ${id} 1\\.0\\.0 does not fit ${small.url}: the archive is [\\d.]+ KiB \\(\\d+ bytes\\), over this registry's limit of 20 KiB`,
        ),
      );
      expect((await runInProcess(['validate', dir, '--offline'], { env: { NODEREG_REGISTRY: small.url } })).code).toBe(
        0,
      );

      const result = await runInProcess(['publish', dir], {
        env: { NODEREG_REGISTRY: small.url, NODEREG_TOKEN: small.adminToken },
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(
          `error: the archive of ${id} 1\\.0\\.0 does not fit ${small.url}: the archive is [\\d.]+ KiB \\(\\d+ bytes\\), over this registry's limit of 20 KiB \\(20000 bytes\\)`,
        ),
      );
      expect(result.stderr).toContain(
        'hint: nothing was published: leave files out with [tool.nodereg] excludes or a .noderegignore file (`nodereg pack --list` shows what is packed)',
      );
      expect((await fetch(`${small.url}/nodes/${id}`)).status).toBe(404);
      expect((await fetch(`${small.url}/nodes/${id}/versions`)).status).toBe(404);
      expect(((await (await fetch(`${small.url}/nodes/search?q=${id}`)).json()) as { total?: number }).total).toBe(0);
    } finally {
      await small.close();
    }
  });
});

describe('publish in-process (what a spawned binary cannot show)', () => {
  async function publishInProcess(args: string[], options: { tty: boolean; env?: Record<string, string> }) {
    let stdout = '';
    let stderr = '';
    const code = await run(['publish', ...args], '0.0.0-test', {
      env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: server.adminToken, NO_COLOR: '1', ...options.env },
      stdout: { write: (text: string) => ((stdout += text), true) },
      stderr: { write: (text: string) => ((stderr += text), true), isTTY: options.tty },
      interactive: false,
    });
    await checkHints(stdout, stderr);
    return { code, stdout, stderr };
  }

  it('draws an upload progress bar on a terminal, and none in CI', async () => {
    const shown = await publishInProcess([project({ extra: { 'big.bin': randomBytes(300_000) } }).dir], { tty: true });
    expect(shown.code).toBe(0);
    expect(shown.stderr).toMatch(/\r\x1b\[2K {2}uploading \[#{30}\] 100% {2}[\d.]+ KiB \/ [\d.]+ KiB\n/);
    const ci = await publishInProcess([project().dir], { tty: true, env: { CI: '1' } });
    expect(ci.code).toBe(0);
    expect(ci.stderr).not.toContain('uploading');
  });

  it('names conflicting or bad flags before doing anything', async () => {
    const { dir } = project();
    const both = await publishInProcess([dir, '--changelog', 'a', '--changelog-file', 'b.md'], { tty: false });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--changelog and --changelog-file cannot be used together');
    const size = await publishInProcess([dir, '--max-size', 'huge'], { tty: false });
    expect(size.code).toBe(2);
    expect(size.stderr).toContain('--max-size "huge" is not a size');
    const missing = await publishInProcess([dir, '--changelog-file', join(dir, 'nope.md')], { tty: false });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`cannot read --changelog-file ${join(dir, 'nope.md')}: no such file or directory`);
    expect(missing.stderr).not.toContain('ENOENT');
  });

  it.each([
    ['a dry run, as JSON', () => [project().dir, '--dry-run', '--json'], 0, '"dry_run":true'],
    ['a directory that does not exist', () => [join(tempDir(), 'missing')], 2, 'error: '],
    [
      'findings at --fail-on',
      () => [
        project({
          extra: {
            'install.py':
              'import subprocess, sys\nsubprocess.check_call([sys.executable, "-m", "pip", "install", "numpy"])\n',
          },
        }).dir,
        '--json',
      ],
      2,
      '"code":"scan_findings"',
    ],
    ['an archive over --max-size', () => [project().dir, '--max-size', '10', '--accept-findings'], 2, 'error: '],
    ['a publisher that does not exist', () => [project({ publisher: 'nobody-here' }).dir], 5, 'error: '],
  ])('%s', async (_name, args, code, said) => {
    const result = await publishInProcess(args(), { tty: false });
    expect(result.code, result.stderr).toBe(code);
    expect((result.stdout + result.stderr).replace(/\s+/g, '')).toContain(said.replace(/\s+/g, ''));
  });
});

describe('an upload whose answer is lost', () => {
  it('the retry finds its own archive on the registry: published, exit 0', async () => {
    const { id, dir } = project();
    proxy.loseAnswers = 1;
    try {
      const result = await runInProcess(['publish', dir, '--json'], { env: env() });
      expect(proxy.loseAnswers).toBe(0);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        node_id: id,
        version: '1.0.0',
        status: 'NodeVersionStatusActive',
      });
    } finally {
      proxy.loseAnswers = 0;
    }
  });
});

describe('interrupting publish', () => {
  it('Ctrl-C during the upload: exits 130, names the pending version and the command that finishes it, leaves no temporary archive', async () => {
    const { id, dir } = project({ extra: { 'big.bin': randomBytes(2_000_000) } });
    const tmp = tempDir('nodereg-tmpdir-');
    proxy.stallPuts = true;
    try {
      const child = spawn(process.execPath, [INSTALLED_BIN, 'publish', dir, '--changelog', 'first'], {
        env: { ...cliEnv(tempDir()), TMPDIR: tmp, ...env() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const puts = proxy.putAuthorizations.length;
      for (let i = 0; i < 200 && proxy.putAuthorizations.length === puts; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(proxy.putAuthorizations.length).toBe(puts + 1); // the upload is under way
      expect(readdirSync(tmp).filter((name) => name.startsWith('nodereg-publish-'))).toHaveLength(1);
      child.kill('SIGINT');
      const [code, signal] = await new Promise<[number | null, string | null]>((done) =>
        child.on('close', (c, s) => done([c, s])),
      );
      expect({ code, signal }).toEqual({ code: 130, signal: null });
      await checkHints('', stderr);
      expect(stderr).toContain(
        `error: interrupted during the upload: ${id} 1.0.0 is registered on ${server.url}; if its archive did not arrive whole, it is pending`,
      );
      expect(stderr).toContain(`hint: finish it with \`nodereg publish ${dir} --skip-existing --changelog first\``);
      expect(stderr).toContain(`or withdraw it with \`nodereg version withdraw ${id} 1.0.0\``);
      expect(readdirSync(tmp)).toEqual([]);
      expect(await (await getVersion(id, '1.0.0')).json()).toMatchObject({ status: 'NodeVersionStatusPending' });

      // the printed command finishes it
      proxy.stallPuts = false;
      const finished = await runInProcess(['publish', dir, '--skip-existing', '--changelog', 'first'], { env: env() });
      expect(finished.code, finished.stderr).toBe(0);
      expect(await (await getVersion(id, '1.0.0')).json()).toMatchObject({ status: 'NodeVersionStatusActive' });
    } finally {
      proxy.stallPuts = false;
    }
  });

  it('Ctrl-C once the registry has the archive but before its answer: the printed command finishes with exit 0', async () => {
    const { id, dir } = project();
    proxy.holdPutAnswers = true;
    try {
      const child = spawn(process.execPath, [INSTALLED_BIN, 'publish', dir], {
        env: { ...cliEnv(tempDir()), ...env() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const held = proxy.heldAnswers;
      for (let i = 0; i < 200 && proxy.heldAnswers === held; i++) await new Promise((r) => setTimeout(r, 50));
      expect(proxy.heldAnswers).toBe(held + 1); // the upload is done on the registry; the CLI has no answer yet
      expect(await (await getVersion(id, '1.0.0')).json()).toMatchObject({ status: 'NodeVersionStatusActive' });
      child.kill('SIGINT');
      const [code] = await new Promise<[number | null]>((done) => child.on('close', (c) => done([c])));
      expect(code).toBe(130);
      await checkHints('', stderr);
      expect(stderr).not.toContain('without its archive (pending)'); // it is not: the registry has it
      const command = /hint: finish it with `nodereg ([^`]+)`/.exec(stderr)?.[1];
      expect(command).toBe(`publish ${dir} --skip-existing`);
      proxy.holdPutAnswers = false;
      const finished = await runInProcess(command!.split(' '), { env: env() });
      expect(finished.code, finished.stderr).toBe(0);
    } finally {
      proxy.holdPutAnswers = false;
    }
  });
});

// ---------- a forwarding proxy in front of the registry, able to fail uploads ----------

interface Proxy {
  url: string;
  target: string;
  /** How many of the next PUTs to fail (the connection is cut after part of the body is read: retried as a restart, for 15 s). */
  failPuts: number;
  /** How many of the next PUTs to answer 500 once their body is read (retried three times in all). */
  errorPuts: number;
  /** While true, PUTs are held: nothing is read, nothing answered. */
  stallPuts: boolean;
  /** How many of the next PUTs reach the registry whole and lose its answer (the connection is cut instead). */
  loseAnswers: number;
  /** While true, PUTs reach the registry but its answers are held back (counted in heldAnswers). */
  holdPutAnswers: boolean;
  heldAnswers: number;
  requests: string[];
  putSizes: number[];
  putAuthorizations: (string | undefined)[];
  close(): Promise<void>;
}

async function startProxy(): Promise<Proxy> {
  const state = {
    target: '',
    failPuts: 0,
    errorPuts: 0,
    stallPuts: false,
    holdPutAnswers: false,
    heldAnswers: 0,
    loseAnswers: 0,
    requests: [] as string[],
    putSizes: [] as number[],
    putAuthorizations: [] as (string | undefined)[],
  };
  const httpServer = http.createServer((req, res) => {
    state.requests.push(`${req.method} ${req.url}`);
    if (req.method === 'PUT') {
      state.putAuthorizations.push(req.headers.authorization);
      if (state.stallPuts) {
        req.pause();
        req.socket.on('close', () => res.destroy());
        return;
      }
      let size = 0;
      req.on('data', (chunk: Buffer) => (size += chunk.length));
      if (state.errorPuts > 0) {
        state.errorPuts--;
        req.on('end', () =>
          res
            .writeHead(500, { 'content-type': 'application/json' })
            .end('{"error":"internal","message":"the disk failed"}'),
        );
        return;
      }
      if (state.failPuts > 0) {
        state.failPuts--;
        req.once('data', () => {
          state.putSizes.push(size);
          req.socket.destroy(); // a connection lost mid-upload
        });
        return;
      }
      req.on('end', () => state.putSizes.push(size));
    }
    const upstream = http.request(
      new URL(req.url!, state.target),
      { method: req.method, headers: req.headers },
      (answer) => {
        if (req.method === 'PUT' && state.loseAnswers > 0) {
          state.loseAnswers--;
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        if (req.method === 'PUT' && state.holdPutAnswers) {
          answer.resume();
          answer.on('end', () => state.heldAnswers++);
          req.socket.on('close', () => res.destroy());
          return;
        }
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    // A held (paused) request never reads its client's FIN, so its socket would keep close() waiting.
    close: () =>
      new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      }),
  });
}

/** A URL on 127.0.0.1 where nothing listens. */
async function closedPortUrl(): Promise<string> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
