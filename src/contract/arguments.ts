// How the CLI checks an id or a version given as an argument, free of zod at run time: with checks
// generated from the contract's rules at build time (scripts/request-checks.js), small enough that
// `node show ID` loads them and nothing else of the contract's schemas. A refusal is worded as the
// server words the same field (check-words.ts).
import { refusal } from './check-words.js';
import type { FieldError } from './error-body.js';
import * as generated from './generated/arguments.js';

/** The rules that have a generated check, by the name of their schema in resources/fields.ts. */
export type ArgumentRule = 'NodeId' | 'PublisherId' | 'Semver';
/** The node fields a member writes, the type of each one's value, whether the spec deprecates it, and its description. */
export const { nodeWritable } = generated;

/**
 * `value` as the rule reads it (a version `1.0` as `1.0.0`) when the rule accepts it; else the rule's
 * refusal, in the words the server gives it.
 */
export function checkArgument(rule: ArgumentRule, value: string): { value: string } | { refusal: FieldError } {
  const holder = { value };
  const check = generated[rule];
  if (check(holder)) return { value: holder.value };
  return { refusal: refusal(check.errors ?? [], holder, generated.words[rule]) };
}
