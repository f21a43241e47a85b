// `npm test`: vitest with `biome check` and `tsc` beside it (scripts/beside-checks.js). A failed check
// fails the run and its output comes last, under a line naming it; words after `npm test --` reach vitest.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain JavaScript script, without types
import { runBeside } from '../../scripts/beside-checks.js';

const node = (code: string): [string, string[]] => [process.execPath, ['-e', code]];
const passes = node('');
const fails = node('console.log("src/a.ts(1,1): error TS2322"); process.exit(2)');

async function outcome(main: [string, string[]], checks: [string, string[]][]) {
  let shown = '';
  const code = await runBeside([main[0], ...main[1]], checks, (text: string) => (shown += text));
  return { code, shown };
}

describe('npm test', () => {
  it('passes the words after `npm test --` to vitest', () => {
    const script: string = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')).scripts
      .test;
    // npm appends them to the script: it must end with the vitest command
    expect(script).toMatch(/ vitest run$/);
  });

  it('fails when a check fails, and shows its output after the tests, naming it', async () => {
    const { code, shown } = await outcome(passes, [passes, fails]);
    expect(code).toBe(1);
    expect(shown).toMatch(/error TS2322\n[^]*`.+process\.exit\(2\)` failed \(exit 2\)/);
  });

  it('fails when the tests fail, and passes when all pass', async () => {
    expect((await outcome(node('process.exit(3)'), [passes])).code).toBe(1);
    expect(await outcome(passes, [passes, passes])).toEqual({ code: 0, shown: '' });
  });
});
