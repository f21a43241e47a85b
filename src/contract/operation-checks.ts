// How the client checks the params, query and body of a request before it sends them, free of zod at
// run time: with checks generated from each operation's schemas at build time (scripts/request-checks.js),
// a module per operation, loaded when a command first checks a request of it. A refusal is worded as the
// server words the same field (check-words.ts).
import { refusal, type Words } from './check-words.js';
import type { FieldError } from './error-body.js';
import { operations } from './generated/operations.js';
import type { RequestCheck } from './requests.js';

/** The parts of a request a check covers. */
export type RequestPart = 'params' | 'query' | 'body';

/** The generated checks of one operation: `body` when it sends JSON. */
export interface OperationChecks {
  params: RequestCheck;
  query: RequestCheck;
  body?: RequestCheck;
  words: Partial<Record<RequestPart, Words>>;
}

/** The operations of the contract, by id. */
export type OperationId = keyof typeof operations;

/**
 * `value` as the operation's schema for `part` outputs it (defaults filled in, unknown keys dropped,
 * transforms run) when the schema accepts it; else its first problem, in the words the server gives it.
 */
export async function checkRequestPart(
  id: OperationId,
  part: RequestPart,
  value: unknown,
): Promise<{ value: unknown } | { refusal: FieldError }> {
  const checks = await operations[id]();
  const check = checks[part];
  if (!check) throw new Error(`${id} sends no JSON ${part}`);
  const holder = { value: structuredClone(value) };
  if (check(holder)) return { value: holder.value };
  return { refusal: refusal(check.errors ?? [], holder, checks.words[part] ?? {}) };
}
