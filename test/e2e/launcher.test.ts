// bin/nodereg.js: a bare --version is answered by the launcher itself (CommonJS, before the bundle
// loads); every other form goes through the CLI. An unbuilt checkout: test/e2e/newcomer.test.ts.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';

const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8'));

describe('launcher', () => {
  it.each([['--version'], ['-V'], ['--json', '--version']])('%j prints the version of package.json', async (...args) => {
    const result = await runCli(args);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});
