// The review flow's record of a version (DESIGN.md §14): once a decision or a re-review request was
// made, `status_reason` holds this object as JSON text, the shape the hosted registry's admin tools
// write: the latest message, who wrote it, and every entry before it, oldest first. A version without
// one keeps a plain one-line reason (the scan's, or an admin's).
import * as z from 'zod';
import { documented, transform } from './fields.js';
import { NODE_VERSION_STATUS } from './limits.js';

/** What an entry records: an admin's decision, or a member's request for a re-review. */
export const REVIEW_ACTIONS = ['approve', 'ban', 'ask-change', 'appeal'] as const;

export const StatusHistoryEntry = z.looseObject({
  status: z.enum(NODE_VERSION_STATUS),
  message: z.string(),
  /** The user who wrote it (their name; the hosted registry writes an e-mail here). */
  by: z.string().optional(),
  /** When, ISO 8601 (ours; the hosted registry's entries have none). */
  at: z.string().optional(),
  action: z.enum(REVIEW_ACTIONS).optional(),
});
export type StatusHistoryEntry = z.infer<typeof StatusHistoryEntry>;

export const StatusReason = z.looseObject({
  message: z.string(),
  by: z.string(),
  statusHistory: z.array(StatusHistoryEntry).optional(),
});
export type StatusReason = z.infer<typeof StatusReason>;

/** A message a member or an admin writes into the history. */
export const REVIEW_MESSAGE_MAX = 2000;
export const ReviewMessage = documented(
  transform<z.ZodString, 'message', string>(z.string(), 'message', { max: REVIEW_MESSAGE_MAX }),
  { inputs: z.string().min(1).max(REVIEW_MESSAGE_MAX) },
);

/** The structured reason in a `status_reason`, or undefined when it is a plain line. */
export function parseStatusReason(text: string | null | undefined): StatusReason | undefined {
  if (!text?.startsWith('{')) return undefined;
  try {
    const parsed = StatusReason.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `status_reason` after one more entry: the entry's message on top, the history grown by it.
 * `current` is the version as it is (its status and reason before the entry).
 */
export function withHistoryEntry(
  current: { status: StatusHistoryEntry['status']; status_reason: string | null },
  entry: StatusHistoryEntry,
): string {
  const previous = current.status_reason;
  const before = parseStatusReason(previous);
  const history = before?.statusHistory ?? [];
  // A plain line (the scan's reason) becomes the first entry, so nothing said before is lost.
  const first: StatusHistoryEntry[] = !before && previous ? [{ status: current.status, message: previous }] : [];
  return JSON.stringify({ message: entry.message, by: entry.by ?? '', statusHistory: [...first, ...history, entry] });
}
