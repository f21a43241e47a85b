// bin/nodereg.js runs dist/cli/main.js, the CLI's one entry, for every command line. An unbuilt
// checkout: test/cli/hints-and-downloads.test.ts.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';

const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8'));

describe('launcher', () => {
  it.each([['--version'], ['-V'], ['--json', '--version']])(
    '%j prints the version of package.json',
    async (...args) => {
      const result = await runCli(args);
      expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    },
  );
});
