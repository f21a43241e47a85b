// What each exit code means is written once (EXIT_MEANINGS, src/cli/errors.ts): the help is made from it,
// and README must say the same, word for word.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT, EXIT_MEANINGS, exitCodesHelp } from '../../src/cli/errors.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('exit codes', () => {
  it('every code of EXIT has its meaning, in order', () => {
    expect(EXIT_MEANINGS.map((m) => m.code)).toEqual(Object.values(EXIT));
  });

  it('README\'s "Exit codes" table is EXIT_MEANINGS', () => {
    const table = readme.split('\n## Exit codes\n\n')[1]?.split('\n\n')[0];
    const expected = ['| code | meaning | when |', '|---|---|---|', ...EXIT_MEANINGS.map((m) => `| ${m.code} | ${m.name} | ${m.when ?? ''} |`)];
    expect(table).toBe(expected.join('\n'));
  });

  it.each(['scan', 'restore'] as const)("README's exit codes of %s are EXIT_MEANINGS'", (command) => {
    const line = `Exit codes: ${EXIT_MEANINGS.filter((m) => m[command]).map((m) => `${m.code} ${m[command]}`).join('; ')}.`;
    // README's paragraphs break lines anywhere: its "Exit codes: 0 …." sentences as a reader sees them
    expect(readme.replace(/\s+/g, ' ').match(/Exit codes: 0[^.]*\./g)).toContain(line);
  });

  it('the help wraps at 88 columns, continuation lines under the meaning, backticks dropped', () => {
    const help = exitCodesHelp('publish');
    expect(help).toContain('\n  2    invalid project or flags; the local scan found something at or above --fail-on;\n       or the registry flagged');
    expect(help).not.toContain('`');
    for (const line of [...help.split('\n'), ...exitCodesHelp().split('\n')]) expect(line.length).toBeLessThanOrEqual(88);
    expect(exitCodesHelp()).toContain('0 success · 1 failure · 2 invalid input');
  });
});
