// How the client reads the review history a version's `status_reason` holds as JSON text, free of zod
// at run time: with the generated check of StatusReason (scripts/answer-checks.js), as it reads answers.
// The server reads it with the schema itself (status-reason.ts `parseStatusReason`).
import { check } from './generated/answers/StatusReason.js';
import type { StatusReason } from './status-reason.js';

/** The structured reason in a `status_reason`, or undefined when it is a plain line. */
export function readStatusReason(text: string | null | undefined): StatusReason | undefined {
  if (!text?.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return check(value) ? (value as StatusReason) : undefined;
  } catch {
    return undefined;
  }
}
