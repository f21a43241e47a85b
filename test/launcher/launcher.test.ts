// bin/nodereg.js runs dist/cli/main.js, the CLI's one entry, for every command line. An unbuilt
// checkout: test/cli/hints-and-downloads.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers.js';

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

describe('what the launcher loads', () => {
  it.each([['--version'], ['--help']])(
    '%j loads no node:child_process (commander requires it only to start a subcommand program)',
    async (...args) => {
      const dir = tempDir('nodereg-builtins-');
      const log = join(dir, 'builtins.txt');
      const hook = join(dir, 'builtins.cjs');
      writeFileSync(
        hook,
        `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(log)}, process.moduleLoadList.join('\\n')));\n`,
      );
      const result = await runCli(args, { env: { NODE_OPTIONS: `--require=${hook}` } });
      expect(result.code).toBe(0);
      const loaded = readFileSync(log, 'utf8').split('\n');
      expect(loaded).toContain('NativeModule internal/modules/cjs/loader'); // the record holds the run's modules
      expect(loaded).not.toContain('NativeModule child_process');
    },
  );
});
