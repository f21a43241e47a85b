// `validate --json` that stops at scan findings: CI tools read every finding as an object (as `scan
// --json` lists them) with the error code; the human message lists the first 20 and points at `nodereg scan`.
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { runInProcess } from '../cli/in-process.js';
import { writeTree } from '../package/fixtures.js';

const FINDINGS = 25;

function riskyNode(): string {
  return writeTree(tempDir('nodereg-validate-findings-'), {
    'pyproject.toml': '[project]\nname = "many-findings"\nversion = "1.0.0"\n\n[tool.nodereg]\npublisher = "acme"\n',
    '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    'install.py': `import subprocess\n${'subprocess.run("pip install numpy", shell=True)\n'.repeat(FINDINGS)}`,
  });
}

describe('validate --json with scan findings', () => {
  it('lists every finding as an object with the error code; the human output lists 20 and names nodereg scan for the rest', async () => {
    const dir = riskyNode();
    const json = await runInProcess(['validate', dir, '--offline', '--json']);
    expect(json.code).toBe(2);
    const { error } = JSON.parse(json.stdout);
    expect(error.code).toBe('scan_findings');
    expect(error.findings).toHaveLength(FINDINGS);
    expect(error.findings.map((f: { line: number }) => f.line)).toEqual(
      Array.from({ length: FINDINGS }, (_, i) => i + 2),
    );
    expect(error.findings[0]).toMatchObject({
      file: 'install.py',
      line: 2,
      column: expect.any(Number),
      rule: 'runtime-install',
      severity: 'high',
      message: expect.any(String),
      hint: expect.any(String),
    });

    const human = await runInProcess(['validate', dir, '--offline']);
    expect(human.code).toBe(2);
    expect(human.stderr.match(/install\.py:\d+ {2}high/g)).toHaveLength(20);
    expect(human.stderr).toContain(`and ${FINDINGS - 20} more (\`nodereg scan\` lists every one)`);
  });
});
