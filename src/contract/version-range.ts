// The rules of the wire that need semver, apart from rules.ts: semver builds its regular expressions
// when it loads, and a check that reads no version range (an id, a version) should not pay for them.
// The generated request checks import this module only when a schema they check has such a rule
// (scripts/request-checks.js). Free of zod.
import validRange from 'semver/ranges/valid.js';

/**
 * Reads a version requirement as a semver range: `>=1.0.0`, `>=1.0.0 <2.0.0`, `^1.2`, `*`; parts may
 * also be separated by commas and `==` is taken as `=`, as Python writes them. Undefined when it is none.
 */
export function versionRange(value: string): string | undefined {
  const normalised = value
    .replace(/==/g, '=')
    .replace(/\s*,\s*/g, ' ')
    .trim();
  return validRange(normalised) ?? undefined;
}

/** Refinements, as RULES of rules.ts, that read a version range. */
export const RANGE_RULES = {
  versionRangeOrEmpty: (value: string) => value === '' || versionRange(value) !== undefined,
};
