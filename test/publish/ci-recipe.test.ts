// The CI recipe of docs/ci.md, run as written: the Publish step's script, taken from that page, in a node's
// repository holding the tarball that `npm pack` makes, with CI=true, no terminal and a fresh HOME,
// against a real registry. Nothing is fetched: the tarball's bundle needs only Node.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { checkHints } from '../cli/hint-check.js';
import { gitRepo } from '../package/fixtures.js';
import { call, createPat, createPublisher, createUser } from '../server/fixtures.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** The `run: |` script of the workflow step named Publish in docs/ci.md, as GitHub Actions runs it. */
function publishStepScript(): string {
  const page = readFileSync(join(ROOT, 'docs/ci.md'), 'utf8');
  const lines = page.split('\n');
  const step = lines.findIndex((line) => line.trim() === '- name: Publish');
  const run = lines.findIndex((line, i) => i > step && line.trim() === 'run: |');
  const indent = lines[run].indexOf('run') + 2;
  const script: string[] = [];
  for (const line of lines.slice(run + 1)) {
    if (line.trim() !== '' && line.search(/\S/) < indent) break;
    script.push(line.slice(indent));
  }
  return script.join('\n');
}

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startServer();
  const owner = await createUser(server, 'ci-owner');
  await createPublisher(server, owner, 'acme');
  token = await createPat(server, owner, 'acme');
});
afterAll(() => server.close());

describe("docs/ci.md's CI recipe", () => {
  it('publishes from the packed tarball, then skips the same version, saying so in GITHUB_OUTPUT', {
    timeout: 120_000,
  }, async () => {
    const script = publishStepScript();
    expect(script).toContain('node "$RUNNER_TEMP/package/bin/nodereg.js" publish --skip-existing');
    expect(script).not.toMatch(/npx|npm install/);

    // the maintainer's side: a tarball from npm pack (dist is built by `npm test`)
    const packed = tempDir('nodereg-packed-');
    execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', packed], { cwd: ROOT, stdio: 'ignore' });
    const [tarball] = readdirSync(packed);
    expect(tarball).toMatch(/^nodereg-.+\.tgz$/);

    // the publisher's repository, set up as docs/ci.md says
    const repo = gitRepo({
      'pyproject.toml':
        '[project]\nname = "ci-node"\nversion = "1.0"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "acme"\n',
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    });
    mkdirSync(join(repo, 'tools'));
    copyFileSync(join(packed, tarball), join(repo, 'tools', tarball));
    appendFileSync(join(repo, '.noderegignore'), 'tools/\n');

    const runStep = () => {
      const runnerTemp = tempDir('nodereg-runner-');
      const githubOutput = join(runnerTemp, 'github-output');
      const env = {
        PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
        HOME: tempDir('nodereg-home-'),
        CI: 'true',
        RUNNER_TEMP: runnerTemp,
        GITHUB_OUTPUT: githubOutput,
        NODEREG_TOKEN: token,
        NODEREG_REGISTRY: server.url,
        NODEREG_CHANGELOG: 'Release 1.0',
      };
      return new Promise<{ code: number | null; stdout: string; stderr: string; output: string }>((done) => {
        // as GitHub Actions runs a `run:` script: bash -e, stdin not a terminal
        const child = spawn('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', script], {
          cwd: repo,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk) => (stdout += chunk));
        child.stderr.on('data', (chunk) => (stderr += chunk));
        child.on('close', (code) => done({ code, stdout, stderr, output: readFileSync(githubOutput, 'utf8') }));
      });
    };

    const first = await runStep();
    expect(first.code, first.stderr).toBe(0);
    await checkHints(first.stdout, first.stderr);
    expect(first.output).toMatch(
      /^version=1\.0\.0\ndownload_url=http.+\/archives\/acme\/ci-node\/1\.0\.0\/node\.zip\narchive_sha256=[0-9a-f]{64}\nskipped=false\n$/,
    );
    const version = await call(server.url, 'GET', '/nodes/ci-node/versions/1.0.0');
    expect(version.body).toMatchObject({ status: 'NodeVersionStatusActive', changelog: 'Release 1.0' });
    const archive = join(tempDir(), 'node.zip');
    writeFileSync(archive, Buffer.from(await (await fetch(version.body.downloadUrl)).arrayBuffer()));
    expect(execFileSync('unzip', ['-Z1', archive], { encoding: 'utf8' }).split('\n').filter(Boolean).sort()).toEqual([
      '.noderegignore',
      '__init__.py',
      'pyproject.toml',
    ]);

    const again = await runStep();
    expect(again.code, again.stderr).toBe(0);
    await checkHints(again.stdout, again.stderr);
    expect(again.stdout).toContain('skipped: ci-node 1.0.0 is already published');
    expect(again.output).toMatch(/skipped=true\n$/);
  });
});
