// How `init` checks the node fields it asks for, free of zod at run time: with checks generated from
// NodeWritable's fields at build time (scripts/request-checks.js), refusing in the server's words.
import { refusal } from './check-words.js';
import type { FieldError } from './error-body.js';
import * as generated from './generated/node-fields.js';

/** The node fields `init` asks for, by the name of their generated check: NodeWritable's, given (not null). */
export type NodeFieldRule = 'NodeName' | 'NodeDescription' | 'NodeTags' | 'NodeIcon';

/** The refusal of a node field's value by its rule, in the words the server gives it; undefined when it meets the rule. */
export function checkNodeField(rule: NodeFieldRule, value: string | string[]): FieldError | undefined {
  const holder = { value };
  const check = generated[rule];
  return check(holder) ? undefined : refusal(check.errors ?? [], holder, generated.words[rule]);
}
