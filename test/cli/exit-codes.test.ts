// What each exit code means is written once (EXIT_MEANINGS, src/cli/errors.ts): the help is made from it,
// and the docs must say the same, word for word.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT, EXIT_MEANINGS, exitCodesHelp } from '../../src/cli/errors.js';

const doc = (page: string) => readFileSync(new URL(`../../docs/${page}`, import.meta.url), 'utf8');
const pageOf = { scan: 'scan.md', restore: 'postgres-s3.md' } as const;

describe('exit codes', () => {
  it('every code of EXIT has its meaning, in order', () => {
    expect(EXIT_MEANINGS.map((m) => m.code)).toEqual(Object.values(EXIT));
  });

  it('the "Exit codes" table of docs/configuration.md is EXIT_MEANINGS', () => {
    const table = doc('configuration.md').split('\n## Exit codes\n\n')[1]?.split('\n\n')[0];
    const expected = [
      '| code | meaning | when |',
      '|---|---|---|',
      ...EXIT_MEANINGS.map((m) => `| ${m.code} | ${m.name} | ${m.when ?? ''} |`),
    ];
    expect(table).toBe(expected.join('\n'));
  });

  it.each(['scan', 'restore'] as const)("the docs' exit codes of %s are EXIT_MEANINGS'", (command) => {
    const line = `Exit codes: ${EXIT_MEANINGS.filter((m) => m[command])
      .map((m) => `${m.code} ${m[command]}`)
      .join('; ')}.`;
    // the pages break lines anywhere: their "Exit codes: 0 …." sentences as a reader sees them
    expect(
      doc(pageOf[command])
        .replace(/\s+/g, ' ')
        .match(/Exit codes: 0[^.]*\./g),
    ).toContain(line);
  });

  it('the help wraps at 88 columns, continuation lines under the meaning, backticks dropped', () => {
    const help = exitCodesHelp('publish');
    expect(help).toContain(
      '\n  2    invalid project or flags; the local scan found something at or above --fail-on;\n       or the registry flagged',
    );
    expect(help).not.toContain('`');
    for (const line of [...help.split('\n'), ...exitCodesHelp().split('\n')])
      expect(line.length).toBeLessThanOrEqual(88);
    expect(exitCodesHelp()).toContain('0 success · 1 failure · 2 invalid input');
  });
});
