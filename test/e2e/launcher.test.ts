// bin/nodereg.js: a bare --version is answered by the launcher itself (CommonJS, before the bundle
// loads); every other form goes through the CLI; an unbuilt checkout says how to build.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers.js';

const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8'));

describe('launcher', () => {
  it.each([['--version'], ['-V'], ['--json', '--version']])('%j prints the version of package.json', async (...args) => {
    const result = await runCli(args);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('in a checkout that was never built, says to run npm ci (exit 1)', () => {
    const checkout = tempDir();
    mkdirSync(join(checkout, 'bin'));
    for (const file of ['bin/nodereg.js', 'bin/package.json', 'package.json']) copyFileSync(resolve(import.meta.dirname, '../..', file), join(checkout, file));
    for (const args of [['--help'], ['--version']]) {
      const result = spawnSync(process.execPath, [join(checkout, 'bin/nodereg.js'), ...args], { encoding: 'utf8' });
      if (args[0] === '--version') {
        expect(result).toMatchObject({ status: 0, stdout: `${version}\n` });
      } else {
        expect(result.status).toBe(1);
        expect(result.stderr).toContain('nodereg is not built yet');
        expect(result.stderr).toContain('npm ci');
      }
    }
  });
});
