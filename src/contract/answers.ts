// How the client reads the server's answers, free of zod at run time. The checks are generated from
// the contract at build time (scripts/answer-checks.js), through the same JSON Schema as the OpenAPI
// document, so that a CLI read loads neither zod nor the contract's schemas.
import { checks, ErrorBody, routes } from './generated/answer-checks.js';
import type { Method } from './operation.js';

/** A generated check: true when `data` meets the schema; it fills in the fields the contract defaults. */
export type AnswerCheck = (data: unknown) => boolean;

/** What a request needs of an operation, without its schemas. */
export interface Route {
  id: string;
  method: Method;
  path: string;
  responseKind: 'json' | 'zip' | 'text' | 'none';
  /** See Operation.repeatable. */
  repeatable: boolean;
}

export { routes };

/**
 * The JSON text of an answer (of operation `id`, or `ErrorBody`), read leniently: when it meets the
 * contract, with the fields the contract defaults filled in (`""` for a string answers always carry);
 * when it does not (a newer server, a foreign one), as sent. Throws SyntaxError when it is not JSON.
 */
export async function readAnswer(id: string, text: string): Promise<unknown> {
  const data: unknown = JSON.parse(text);
  return (await meetsContract(id, data)) ? data : JSON.parse(text); // as sent: the check may have filled in defaults before it failed
}

/**
 * Whether `data` meets the schema of operation `id`'s answer (or of `ErrorBody`); fills in defaults.
 * Each answer's check is a module of its own, imported on its first use.
 */
export async function meetsContract(id: string, data: unknown): Promise<boolean> {
  const check = await checks[id]?.();
  return check?.(data) ?? true;
}

/** Whether `data` is the registry's error body: the check every failed call runs, at hand at once. */
export const meetsErrorBody: AnswerCheck = ErrorBody;
