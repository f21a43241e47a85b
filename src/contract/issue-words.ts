// What a broken rule of the contract says, in words a user can act on, with an example: the
// contract's error map (messages.ts sets it for zod) and the wording of the generated checks'
// refusals (check-words.ts) both read it, so that the CLI and the server say the same for the same
// field. Free of zod at run time. Messages never quote the value sent: an answer stays small
// whatever was sent.
import type * as z from 'zod';

export type Issue = z.core.$ZodRawIssue;

/** What a value of each JSON type looks like, for "must be …, such as …". */
const KINDS: Record<string, string> = {
  string: 'text, such as "example"',
  number: 'a number, such as 3',
  int: 'a whole number (no decimals), such as 3',
  boolean: 'true or false',
  array: 'a list, such as ["first", "second"]',
  object: 'a table of keys and values, such as {"name": "value"}',
  record: 'a table of keys and values, such as {"name": "value"}',
  null: 'null',
};

const plural = (count: number | bigint, one: string) =>
  `${Number(count).toLocaleString('en-US')} ${one}${Number(count) === 1 ? '' : 's'}`;

function sizeRule(issue: Issue & { code: 'too_big' | 'too_small' }): string {
  const limit = issue.code === 'too_big' ? issue.maximum : issue.minimum;
  const most = issue.code === 'too_big' ? 'at most' : 'at least';
  const inclusive = issue.inclusive !== false;
  switch (issue.origin) {
    case 'string':
      return Number(limit) === 1 && issue.code === 'too_small'
        ? 'must not be empty'
        : `must be ${most} ${plural(limit, 'character')} long`;
    case 'array':
    case 'set':
      return `must have ${most} ${plural(limit, 'item')}`;
    case 'number':
    case 'int':
    case 'bigint':
      if (inclusive) return `must be ${most} ${limit}`;
      return `must be ${issue.code === 'too_big' ? 'less' : 'more'} than ${limit}`;
    default:
      return `must be ${most} ${limit}`;
  }
}

/** A union's message: the rule of the branch that came closest (one that failed on more than its type). */
function unionRule(issue: Issue & { code: 'invalid_union' }): string | undefined {
  const branches = issue.errors ?? [];
  const closest = branches.find((branch) => branch.length && branch.some((i) => i.code !== 'invalid_type'));
  if (closest) return closest.find((i) => i.code !== 'invalid_type')!.message;
  const kinds = branches
    .flatMap((branch) => branch.map((i) => (i.code === 'invalid_type' ? i.expected : undefined)))
    .filter(Boolean);
  return kinds.length ? `must be ${[...new Set(kinds)].map((k) => KINDS[k!] ?? k).join(', or ')}` : undefined;
}

/** The message for a zod issue, or undefined to keep a schema's own message. */
export function issueMessage(issue: Issue): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return `is required: give ${KINDS[issue.expected] ?? issue.expected}`;
      if (typeof issue.input === 'number' && Number.isNaN(issue.input)) return `must be ${KINDS.number}`;
      return `must be ${KINDS[issue.expected] ?? issue.expected}`;
    }
    case 'too_big':
    case 'too_small':
      return sizeRule(issue);
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_format':
      if (issue.format === 'email') return 'must be an e-mail address, such as name@example.com';
      if (issue.format === 'regex') return 'is not in the expected form';
      return `must be in ${issue.format} form`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'unrecognized_keys':
      return `has unknown ${issue.keys.length === 1 ? 'key' : 'keys'} ${issue.keys
        .slice(0, 5)
        .map((k) => JSON.stringify(k.slice(0, 64)))
        .join(', ')}`;
    case 'invalid_key':
      return 'has a key that is not accepted';
    case 'invalid_element':
      return 'has an item that is not accepted';
    case 'invalid_union':
      return unionRule(issue);
    default:
      return undefined;
  }
}
