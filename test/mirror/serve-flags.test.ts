// `nodereg serve --upstream …`: bad values are usage errors naming their flag, before anything starts.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { tempDir } from '../helpers.js';

describe('serve --upstream flags', () => {
  it.each([
    [['--upstream', 'ftp://mirror.example'], '--upstream'],
    [['--upstream', 'http://127.0.0.1:9', '--upstream-ttl', 'soon'], '--upstream-ttl'],
    [['--upstream-policy', 'policy.toml'], '--upstream-policy needs --upstream'],
    [['--upstream', 'http://127.0.0.1:9', '--upstream-pin-days', 'a week'], '--upstream-pin-days'],
  ])('refuses %j naming %s', async (flags, named) => {
    const result = await runInProcess(['serve', '--port', '0', '--data-dir', tempDir(), ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(named);
  });

  it('refuses a policy file that breaks its rules, naming the file and the field', async () => {
    const dir = tempDir();
    const policy = join(dir, 'policy.toml');
    writeFileSync(policy, '[hold]\ndays = "seven"\n');
    const result = await runInProcess([
      'serve',
      '--port',
      '0',
      '--data-dir',
      dir,
      '--upstream',
      'http://127.0.0.1:9',
      '--upstream-policy',
      policy,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--upstream-policy');
    expect(result.stderr).toContain('hold.days');
  });
});
