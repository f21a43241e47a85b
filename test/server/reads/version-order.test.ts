// The sort key a store keeps beside each version (src/server/store/version-order.ts) orders versions
// as semver precedence does, compared as text byte by byte (as SQLite and PostgreSQL's "C" collation do).
import fc from 'fast-check';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { versionOrder } from '../../../src/server/store/version-order.js';

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const number = fc.oneof(fc.nat({ max: 20 }), fc.nat({ max: 999_999_999_999_999 })).map(String);
const identifier = fc.oneof(
  number,
  fc.stringMatching(/^[0-9A-Za-z-]{1,6}$/).filter((id) => !/^\d+$/.test(id)),
  fc.constantFrom('alpha', 'beta', 'rc', 'a', 'z', 'A', '-', 'alpha-1', '0a'),
);
const version = fc
  .tuple(number, number, number, fc.option(fc.array(identifier, { minLength: 1, maxLength: 4 }), { nil: undefined }))
  .map(([a, b, c, pre]) => `${a}.${b}.${c}${pre ? `-${pre.join('.')}` : ''}`);

describe('versionOrder', () => {
  it('sorts as semver precedence (property, fixed seed)', () => {
    fc.assert(
      fc.property(version, version, (a, b) => {
        expect(byText(versionOrder(a), versionOrder(b))).toBe(semver.compare(a, b));
      }),
      { numRuns: 5000, seed: 20261126 },
    );
  });

  it('puts the cases of the semver specification in their order', () => {
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.2.0',
      '1.10.0',
      '2.0.0-0',
      '2.0.0',
      '999999999999999.0.0',
    ];
    expect([...ordered].reverse().sort((a, b) => byText(versionOrder(a), versionOrder(b)))).toEqual(ordered);
  });

  it('gives what is not a stored version a key below every version, instead of failing', () => {
    expect(versionOrder('not-a-version')).toBe('');
    expect(byText(versionOrder('not-a-version'), versionOrder('0.0.0-0'))).toBe(-1);
  });
});
