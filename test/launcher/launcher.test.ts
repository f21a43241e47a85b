// bin/nodereg.js runs dist/cli/main.js, the CLI's one entry, for every command line. An unbuilt
// checkout: test/cli/hints-and-downloads.test.ts.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
    '%j loads no node:child_process (commander requires it only to start a subcommand program), starts no ES module loader and makes no stderr stream',
    async (...args) => {
      const dir = tempDir('nodereg-builtins-');
      const log = join(dir, 'loaded.json');
      const hook = join(dir, 'loaded.cjs');
      // Node makes process.stderr when it is first read: the hook notes whether anything read it
      writeFileSync(
        hook,
        [
          "const own = Object.getOwnPropertyDescriptor(process, 'stderr');",
          'let stderrMade = false;',
          "Object.defineProperty(process, 'stderr', { configurable: true, enumerable: true, get: () => ((stderrMade = true), own.get.call(process)) });",
          `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(log)}, JSON.stringify({ builtins: process.moduleLoadList, files: Object.keys(require.cache), stderrMade })));`,
          '',
        ].join('\n'),
      );
      const result = await runCli(args, { env: { NODE_OPTIONS: `--require=${hook}` } });
      expect(result.code).toBe(0);
      const { builtins, files, stderrMade } = JSON.parse(readFileSync(log, 'utf8')) as {
        builtins: string[];
        files: string[];
        stderrMade: boolean;
      };
      // the record holds the run's own modules: the bundle's entry among them
      expect(files).toContain(resolve(import.meta.dirname, '../../dist/cli/main.js'));
      expect(builtins).not.toContain('NativeModule child_process');
      expect(builtins).not.toContain('NativeModule internal/modules/esm/loader');
      // making a stderr stream on a pipe loads net: a run that writes nothing there makes none
      expect(stderrMade).toBe(false);
    },
  );

  it('every file of the bundle is strict, as the ES modules it was made from', () => {
    const dist = resolve(import.meta.dirname, '../../dist');
    const files = (readdirSync(dist, { recursive: true }) as string[]).filter((name) => name.endsWith('.js'));
    expect(files.length).toBeGreaterThan(10);
    expect(files.filter((name) => !readFileSync(join(dist, name), 'utf8').startsWith('"use strict";'))).toEqual([]);
  });
});
