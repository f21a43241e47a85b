import { invalidInput } from './errors.js';

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `500ms`, `90s`, `20m`, `1h`, `7d`, or a bare number in `bareUnit`; in ms. Anything else is exit 2 naming the flag. */
export function parseDuration(value: string, flag: string, bareUnit: keyof typeof UNITS = 's'): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!match) throw invalidInput(`invalid ${flag} "${value}"`, `write a duration like 500ms, 90s, 20m or 1h`);
  return Math.round(Number(match[1]) * UNITS[(match[2] ?? bareUnit) as keyof typeof UNITS]);
}
