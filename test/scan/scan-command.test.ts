// `nodereg scan` as a user runs it, in-process, on a node directory. The file set is pack's
// (ignored files are not scanned), --json has the documented shape, --fail-on sets the exit code,
// the human output groups findings by file with the line of code, and the SARIF file validates
// against the SARIF 2.1.0 JSON schema (shipped as a fixture, from the npm package @microsoft/jest-sarif).
import { SCAN_RULE_IDS } from '../../src/contract/limits.js';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { runHints } from '../cli/hints.js';
import { startServer, tempDir, type TestServer, startServerWithPublisher } from '../helpers.js';
import { committedRepo, writeTree } from '../package/fixtures.js';

const require = createRequire(import.meta.url);
const Ajv = require('ajv-draft-04');
const sarifSchema = JSON.parse(readFileSync(join(import.meta.dirname, './fixtures/sarif-2.1.0.json'), 'utf8'));

function nodeDir(): string {
  return writeTree(tempDir('nodereg-scan-'), {
    'pyproject.toml': '[project]\nname = "scanned"\nversion = "1.0.0"\ndescription = "Scanned"\nlicense = "MIT"\n',
    '.gitignore': 'build/\n',
    '__init__.py': 'import os\n\n# eval(source) is not called here\nNODE_CLASS_MAPPINGS = {}\n',
    'nodes/run.py':
      'import subprocess, sys\n\ndef setup():\n    subprocess.check_call([sys.executable, "-m", "pip", "install", "numpy"])\n\ndef run(source):\n    return eval(source)  # nodereg: allow dynamic-execution -- source is our own template\n',
    'nodes/paths.py': 'import sys\nsys.path.append("vendor")\n',
    'web/app.js': 'export const run = (code) => eval(code);\n',
    'build/ignored.py': 'exec(payload)\n',
  });
}

describe('nodereg scan', () => {
  it('--json: findings of the files pack would ship, with rule, severity, file, line, column, message, hint; exit 1 at --fail-on high', async () => {
    const dir = nodeDir();
    const result = await runInProcess(['scan', dir, '--json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    const report = JSON.parse(result.stdout);
    expect(Object.keys(report).sort()).toEqual(['files', 'findings', 'suppressed']);
    expect(report.files).toBe(6);
    expect(report.suppressed).toBe(1);
    expect(
      report.findings.map((f: { file: string; line: number; rule: string }) => `${f.file}:${f.line} ${f.rule}`),
    ).toEqual([
      'nodes/paths.py:2 environment-manipulation',
      'nodes/run.py:4 runtime-install',
      'nodes/run.py:7 dynamic-execution',
      'web/app.js:1 js-dynamic-execution',
    ]);
    expect(report.findings[1]).toEqual({
      rule: 'runtime-install',
      severity: 'high',
      file: 'nodes/run.py',
      line: 4,
      column: 5,
      message: expect.stringContaining('pip install'),
      hint: expect.stringContaining('dependencies'),
      fingerprint: expect.any(String),
    });
    expect(report.findings[2]).toMatchObject({ suppressed: true, reason: 'source is our own template' });
  });

  it('--fail-on decides the exit code: critical passes these findings, medium fails on them', async () => {
    const dir = nodeDir();
    expect((await runInProcess(['scan', dir, '--fail-on', 'critical'])).code).toBe(0);
    expect((await runInProcess(['scan', dir, '--fail-on', 'medium'])).code).toBe(1);
    const clean = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "clean"\nversion = "1.0.0"\n',
      'a.py': 'import json\n',
    });
    const ok = await runInProcess(['scan', clean]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe('no findings in 2 files\n');
    const bad = await runInProcess(['scan', dir, '--fail-on', 'severe']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--fail-on');
  });

  it('a file nested 120,000 brackets deep: scan and validate report its finding (they failed with "Maximum call stack size exceeded")', async () => {
    const dir = writeTree(tempDir(), {
      'pyproject.toml':
        '[project]\nname = "deep"\nversion = "1.0.0"\ndescription = "d"\n[tool.nodereg]\npublisher = "ada"\n',
      'deep.py': `eval(${'['.repeat(120_000)}${']'.repeat(120_000)})\n`,
    });
    const scanned = await runInProcess(['scan', dir, '--json']);
    expect(scanned.code, scanned.stderr).toBe(1);
    expect(
      JSON.parse(scanned.stdout).findings.map((f: { rule: string; line: number }) => `${f.rule}:${f.line}`),
    ).toEqual(['dynamic-execution:1', 'not-fully-analysed:1']);
    const validated = await runInProcess(['validate', dir, '--offline']);
    expect(validated.code, validated.stderr).toBe(2);
    expect(validated.stderr).toMatch(/deep\.py:1 +high +dynamic-execution/);
  }, 120_000);

  it('a file of more findings of one rule than the scan lists: the first 100, and where it stopped looking (it listed every one: 270,000 took 8 s and 1.3 GB)', async () => {
    const dir = writeTree(tempDir(), {
      'pyproject.toml':
        '[project]\nname = "many"\nversion = "1.0.0"\ndescription = "d"\n[tool.nodereg]\npublisher = "ada"\n',
      'many.py': 'eval(x)\n'.repeat(150),
    });
    const json = await runInProcess(['scan', dir, '--json']);
    expect(json.code, json.stderr).toBe(1);
    const report = JSON.parse(json.stdout);
    expect(report.findings).toHaveLength(100);
    expect(report.stopped).toEqual([{ file: 'many.py', rule: 'dynamic-execution' }]);
    const human = await runInProcess(['scan', dir]);
    expect(human.stdout).toMatch(
      /many\.py: the scan stopped looking for dynamic-execution after 100 findings; there may be more\n\n100 findings \(100 high\) in 2 files\n$/,
    );
    const validated = await runInProcess(['validate', dir, '--offline']);
    expect(validated.code).toBe(2);
    expect(validated.stderr).toContain('  and 80 more');
  });

  it('the human output groups findings by file and shows the line of code', async () => {
    const result = await runInProcess(['scan', nodeDir()]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'nodes/run.py\n  4:5  high      runtime-install  subprocess.check_call() runs a package install',
    );
    expect(result.stdout).toContain('| subprocess.check_call([sys.executable, "-m", "pip", "install", "numpy"])');
    expect(result.stdout).not.toContain('return eval(source)');
    expect(result.stdout).toMatch(
      /3 findings \(2 high, 1 medium\) in 6 files, 1 suppressed \(a registry flags it anyway: a comment hides no high or more severe finding there\)\n$/,
    );
  });

  it('--sarif writes SARIF 2.1.0 that validates against the schema: every rule described, results with ruleId, level, relative uri and startLine', async () => {
    const out = join(tempDir(), 'scan.sarif');
    const result = await runInProcess(['scan', nodeDir(), '--sarif', out, '--json']);
    expect(result.code).toBe(1);
    const sarif = JSON.parse(readFileSync(out, 'utf8'));
    const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false }); // the schema has a pattern that is invalid with the u flag;
    const validate = ajv.compile(sarifSchema);
    expect(validate(sarif), JSON.stringify(validate.errors)).toBe(true);
    const run = sarif.runs[0];
    expect(sarif.version).toBe('2.1.0');
    expect(run.tool.driver.name).toBe('nodereg');
    expect(run.tool.driver.rules).toHaveLength(SCAN_RULE_IDS.length);
    expect(run.results[1]).toMatchObject({
      ruleId: 'runtime-install',
      level: 'error',
      locations: [{ physicalLocation: { artifactLocation: { uri: 'nodes/run.py' }, region: { startLine: 4 } } }],
    });
    expect(run.results[2].suppressions).toEqual([{ kind: 'inSource', justification: 'source is our own template' }]);
    // the schema is strict enough to refuse a broken log
    expect(validate({ ...sarif, version: '2.0.0' })).toBe(false);
    expect(validate({ ...sarif, runs: [{ ...run, results: [{ ...run.results[0], level: 'severe' }] }] })).toBe(false);
  });
});

describe('validate, publish and node versions --reasons', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServerWithPublisher('acme');
  });
  afterAll(() => server?.close());

  const risky = (id: string) =>
    writeTree(tempDir('nodereg-scan-publish-'), {
      'pyproject.toml': `[project]\nname = "${id}"\nversion = "1.0.0"\n\n[tool.nodereg]\npublisher = "acme"\n`,
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      'install.py': 'import subprocess\n\nsubprocess.run("pip install numpy", shell=True)\n',
    });
  const env = () => ({ NODEREG_REGISTRY: server.url, NODEREG_TOKEN: server.adminToken });

  it('validate lists the findings and exits 2 at --fail-on; below it, the findings are shown and it passes', async () => {
    const dir = risky('validated');
    const failed = await runInProcess(['validate', dir]);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain('install.py:3  high  runtime-install');
    expect(failed.stderr).toContain('hint: fix it: list the packages in requirements.txt'); // one finding, with its own hint
    // With --json, a failure is the error document alone (DESIGN.md §5), the findings in its message and as objects; no result with `scan`.
    const failedJson = await runInProcess(['validate', dir, '--json']);
    expect(failedJson.code).toBe(2);
    expect(failedJson.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(failedJson.stdout)).toEqual({
      error: {
        code: 'scan_findings',
        message: expect.stringContaining('install.py:3  high  runtime-install'),
        hint: expect.any(String),
        findings: [expect.objectContaining({ file: 'install.py', line: 3, rule: 'runtime-install', severity: 'high' })],
        skipped: [],
      },
    });
    const passed = await runInProcess(['validate', dir, '--fail-on', 'critical', '--json']);
    expect(passed.code).toBe(0);
    expect(JSON.parse(passed.stdout).scan.findings.map((f: { rule: string }) => f.rule)).toEqual(['runtime-install']);
  });

  it('a file the scan cannot parse says what the registry will do: a padded file that names os.system is exit 1 and stops publish (it was "skipped", exit 0, and the registry flagged it); the registry then flags it as said', async () => {
    const pyproject = (id: string) =>
      `[project]\nname = "${id}"\nversion = "1.0.0"\n\n[tool.nodereg]\npublisher = "acme"\n`;
    const repo = committedRepo({
      'pyproject.toml': pyproject('padded-local'),
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      'big.py': `import os\nos.system(cmd)\n${'#'.repeat(5 * 1024 * 1024)}\n`,
      'table.py': `TABLE = [${'12345, '.repeat(800_000)}]\n`, // names nothing a rule looks for: nothing to say
    });
    const said =
      'big.py: not scanned (5242906 bytes, over the limit of 4194304 bytes per file); it names what dynamic-execution, command-injection look for, so a registry flags the version for review';
    const scanned = await runInProcess(['scan', repo]);
    expect(scanned.code, scanned.stderr).toBe(1);
    expect(scanned.stdout).toBe(`${said}\n\nno findings in 4 files, 1 file not scanned\n`);
    const json = await runInProcess(['scan', repo, '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).skipped).toEqual([
      {
        file: 'big.py',
        reason: '5242906 bytes, over the limit of 4194304 bytes per file',
        rules: ['dynamic-execution', 'command-injection'],
        severity: 'high',
      },
    ]);
    expect((await runInProcess(['scan', repo, '--fail-on', 'critical'])).code).toBe(0);

    const stopped = await runInProcess(['publish', repo, '--json'], { env: env() });
    expect(stopped.code, stopped.stderr).toBe(2);
    expect(JSON.parse(stopped.stdout).error).toMatchObject({
      code: 'scan_findings',
      message: expect.stringContaining('big.py  high  not scanned (5242906 bytes'),
    });
    expect((await fetch(`${server.url}/nodes/padded-local`)).status).toBe(404);
    // accepted, it is uploaded and the registry flags it, as said (a Flagged version is exit 2)
    const accepted = await runInProcess(['publish', repo, '--accept-findings'], { env: env() });
    expect(accepted.code, accepted.stderr).toBe(2);
    expect(accepted.stderr).toContain(`warning: scan: big.py high ${said.slice('big.py: '.length)}`);
    expect(accepted.stderr).toContain('error: the registry flagged padded-local 1.0.0');
    const version = await (await fetch(`${server.url}/nodes/padded-local/versions/1.0.0`)).json();
    expect(version).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason:
        'scan: could not scan big.py (5242906 bytes, over the limit of 4194304 bytes per file), which names what dynamic-execution, command-injection look for; an admin must review it',
    });
  }, 60_000);

  it('publish stops before any version is created; --accept-findings publishes, the registry flags it, --reasons shows why', async () => {
    const dir = risky('flagged-node');
    const stopped = await runInProcess(['publish', dir, '--json'], { env: env() });
    expect(stopped.code).toBe(2);
    expect(JSON.parse(stopped.stdout).error).toMatchObject({
      code: 'scan_findings',
      hint: expect.stringContaining('--accept-findings'),
    });
    expect((await fetch(`${server.url}/nodes/flagged-node`)).status).toBe(404);

    const published = await runInProcess(['publish', dir, '--accept-findings', '--json'], { env: env() });
    expect(published.code, published.stderr).toBe(2); // registered with its archive, but nobody can install it
    expect(JSON.parse(published.stdout).error).toMatchObject({
      code: 'flagged',
      message: expect.stringContaining('scan: runtime-install at install.py:3'),
    });

    // the --json error's hint, run as printed
    const [{ argv, result: reasons }] = await runHints(published, { env: env() });
    expect(argv).toEqual(['node', 'versions', 'flagged-node', '--reasons']);
    expect(reasons.code).toBe(0);
    expect(reasons.stdout).toMatch(/^1\.0\.0\s+flagged\s+.*scan: runtime-install at install\.py:3$/m);
    expect(reasons.stdout).toContain('install.py:3  high  runtime-install');
    const stranger = await runInProcess(['node', 'versions', 'flagged-node', '--reasons', '--json'], {
      env: { NODEREG_REGISTRY: server.url },
    });
    expect(JSON.parse(stranger.stdout)[0].findings).toBeUndefined();
  });

  it('publish packs while it scans, but the scan decides first: findings win over a pack that fails, which fails once they are accepted', async () => {
    const dir = risky('packed-while-scanned');
    const stopped = await runInProcess(['publish', dir, '--max-size', '10', '--json'], { env: env() });
    expect(stopped.code).toBe(2);
    expect(JSON.parse(stopped.stdout).error.code).toBe('scan_findings');
    const accepted = await runInProcess(['publish', dir, '--max-size', '10', '--accept-findings', '--json'], {
      env: env(),
    });
    expect(accepted.code).toBe(2);
    expect(JSON.parse(accepted.stdout).error.code).toBe('too_large');
    expect((await fetch(`${server.url}/nodes/packed-while-scanned`)).status).toBe(404);
  });

  it("publish asks for the registry's limits while it scans, but the scan decides first: findings win over a dead registry and over a missing token", async () => {
    const dir = risky('limits-while-scanned');
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const down = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    for (const extra of [{ NODEREG_REGISTRY: down }, { NODEREG_TOKEN: undefined }]) {
      const stopped = await runInProcess(['publish', dir, '--json'], { env: { ...env(), ...extra } });
      expect(stopped.code, stopped.stderr).toBe(2);
      expect(JSON.parse(stopped.stdout).error.code).toBe('scan_findings');
      expect(stopped.stderr).not.toMatch(/cannot reach|no token|unhandled/i);
    }
    const unreachable = await runInProcess(['publish', dir, '--accept-findings'], {
      env: { ...env(), NODEREG_REGISTRY: down },
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(`cannot reach ${down}/`);
  });
});
