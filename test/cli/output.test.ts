// Relative times as `node show` and `token list` print them.
import { expect, it } from 'vitest';
import { printable, relativeTime } from '../../src/cli/output.js';
import { fileTable } from '../../src/cli/project.js';

it('says how long ago or how soon, in the largest whole unit', () => {
  const now = Date.parse('2026-06-15T12:00:00Z');
  const at = (offsetSeconds: number) => new Date(now + offsetSeconds * 1000).toISOString();
  expect(relativeTime(at(0), now)).toBe('now');
  expect(relativeTime(at(-1), now)).toBe('1 second ago');
  expect(relativeTime(at(-170), now)).toBe('3 minutes ago');
  expect(relativeTime(at(-86_400), now)).toBe('yesterday');
  expect(relativeTime(at(86_400), now)).toBe('tomorrow');
  expect(relativeTime(at(3 * 86_400), now)).toBe('in 3 days');
  expect(relativeTime(at(-2 * 31_536_000), now)).toBe('2 years ago');
  expect(relativeTime(undefined, now)).toBe('-');
  expect(relativeTime('not a date', now)).toBe('not a date');
});

it('lists a file whose name holds a line end on one line, so it cannot pose as another file', () => {
  const listed = fileTable([
    { path: 'x\n       4 B  pkg/__init__.py', size: 0 },
    { path: 'pkg/__init__.py', size: 4, untracked: true },
  ]);
  expect(listed.split('\n')).toEqual([
    '       0 B  x\\n       4 B  pkg/__init__.py',
    '       4 B  pkg/__init__.py  (untracked)',
  ]);
});

it('writes every bidi control as a whole \\u escape of four digits, so the letters after it do not read as part of it', () => {
  expect(printable('a\u061cbc\u200ed')).toBe('a\\u061cbc\\u200ed');
});
