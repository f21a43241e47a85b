// How a generated check words its refusal: the same `{path, message}` the server's `fieldErrors` gives
// for the same field, from the same sources (the contract's error map in issue-words.ts, and the words
// the schemas give their own checks and rules, carried into the generated module at build time by
// scripts/request-checks.js). Free of zod.
import type { FieldError } from './error-body.js';
import { fieldError } from './errors.js';
import { type Issue, issueMessage } from './issue-words.js';
import type { TransformIssue } from './rules.js';

/** The words a schema gives its own checks, by the schemaPath of the refusal they word. */
export type Words = Record<string, string>;

/** A refusal of a generated check, as Ajv reports it (`messages: false`: no words of its own). */
export interface CheckError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
}

/** What an enum of the contract holds. */
type Primitive = string | number | boolean | null;

/** The JSON Schema types, as zod names what it expected. */
const EXPECTED: Record<string, string> = { integer: 'int' };

/** `/value/node/tags/2` → `['node', 'tags', '2']`: below the holder's `value`, unescaped. */
function pathOf(instancePath: string): string[] {
  return instancePath
    .split('/')
    .slice(2)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The value at `path` below the checked holder's `value`. */
const valueAt = (holder: unknown, path: string[]) =>
  ['value', ...path].reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], holder);

/** The zod issue a refusal of a JSON Schema keyword is, for the error map to word it. */
function issueOf(error: CheckError, input: unknown): Issue | undefined {
  const { keyword, params } = error;
  const limit = params.limit as number;
  const size = (code: 'too_big' | 'too_small', origin: string, inclusive = true) =>
    ({ code, origin, inclusive, input, [code === 'too_big' ? 'maximum' : 'minimum']: limit }) as Issue;
  switch (keyword) {
    case 'type': {
      const type = String(params.type).split(',')[0]!;
      // zod expects a whole number of a number only: of anything else, a number
      const expected = type === 'integer' && typeof input !== 'number' ? 'number' : (EXPECTED[type] ?? type);
      return { code: 'invalid_type', expected: expected as 'string', input };
    }
    case 'maxLength':
      return size('too_big', 'string');
    case 'minLength':
      return size('too_small', 'string');
    case 'maxItems':
      return size('too_big', 'array');
    case 'minItems':
      return size('too_small', 'array');
    case 'maximum':
    case 'exclusiveMaximum':
      return size('too_big', 'number', keyword === 'maximum');
    case 'minimum':
    case 'exclusiveMinimum':
      return size('too_small', 'number', keyword === 'minimum');
    case 'pattern':
      return { code: 'invalid_format', format: 'regex', input } as Issue;
    case 'enum':
      return { code: 'invalid_value', values: params.allowedValues as Primitive[], input };
    case 'const':
      return { code: 'invalid_value', values: [params.allowedValue as Primitive], input };
    case 'multipleOf':
      return { code: 'not_multiple_of', divisor: params.multipleOf as number, input } as Issue;
    case 'additionalProperties':
      return { code: 'unrecognized_keys', keys: [String(params.additionalProperty)], input } as Issue;
    default:
      return undefined;
  }
}

/**
 * The field a generated check refused and what is wrong with it, in the server's words. `errors` are
 * the check's (the last is the refusal; a nullable field's comes after its X's); `root` the holder it checked.
 */
export function refusal(errors: CheckError[], root: unknown, words: Words): FieldError {
  const error = errors[errors.length - 1]!;
  const path = pathOf(error.instancePath);
  const own = words[error.schemaPath];
  switch (error.keyword) {
    case 'if': // a nullable field's (`if null, else X`), after X's own refusal
      return refusal(errors.slice(0, -1), root, words);
    case 'required': {
      const property = String(error.params.missingProperty);
      // the holder's own `value` missing is the checked value itself missing: no field below it to name
      const field = error.instancePath === '' ? [] : [...path, property];
      return fieldError(field, words[`${error.schemaPath}/${property}`] ?? 'is required');
    }
    case 'propertyNames': // after the key's own refusal: zod names the key, and words it as a key refused
      return fieldError(
        [...path, String(error.params.propertyName)],
        issueMessage({ code: 'invalid_key', origin: 'record', issues: [], input: undefined } as Issue) ??
          'has a key that is not accepted',
      );
    case 'x-rule': // a rule of an object may name one of its fields
      return fieldError(
        [...path, ...((error.params.path as string[] | undefined) ?? [])],
        String(error.params.message),
      );
    case 'x-output': {
      const issue = error.params.issue as TransformIssue;
      return fieldError([...path, ...issue.path], issue.message);
    }
  }
  const issue = issueOf(error, valueAt(root, path));
  return fieldError(path, own ?? (issue && issueMessage(issue)) ?? `breaks the rule ${error.keyword}`);
}
