// A file git tracks that the working tree lacks (deleted, a failed LFS or sparse checkout) is named,
// never dropped from the archive without a word (issue 37).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { committedRepo } from './fixtures.js';

describe('tracked files missing from the working tree', () => {
  it('validate and pack warn, naming the file; with every file there, no warning', async () => {
    const root = committedRepo({
      'pyproject.toml':
        '[project]\nname = "missing-node"\nversion = "1.0.0"\ndescription = "x"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "someone"\n',
      '__init__.py': '',
      'weights/model.json': '{}\n',
    });
    const whole = await runInProcess(['validate', '--offline'], { cwd: root });
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stderr).not.toContain('missing from the working tree');
    rmSync(join(root, 'weights/model.json'));
    for (const argv of [
      ['validate', '--offline'],
      ['pack', '--out', join(root, '..', 'missing.zip')],
    ]) {
      const result = await runInProcess(argv, { cwd: root });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(
        'warning: a file git tracks is missing from the working tree, so not in the archive: weights/model.json',
      );
    }
  });
});
