// Relative times as `node show` and `token list` print them.
import { expect, it } from 'vitest';
import { relativeTime } from '../../src/cli/output.js';

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
