// The review flow's operations (DESIGN.md §14): a publisher member asks for a re-review of a Flagged
// version; an admin reads the queue and decides. Each step is an entry of the version's status
// history, carried in `status_reason` (status-reason.ts).
import * as z from 'zod';
import { REVIEW_DECISIONS } from './limits.js';
import { op } from './operation.js';
import { NodeVersion } from './resources.js';
import { ReviewMessage } from './status-reason.js';

export { REVIEW_DECISIONS };

export const AppealBody = z.object({ message: ReviewMessage.describe('what changed, or why the flag is wrong') });
export const DecisionBody = z.object({
  decision: z.enum(REVIEW_DECISIONS).describe('approve (Active), ban (Banned), or ask-change (stays Flagged)'),
  message: ReviewMessage.describe('the reason the publisher reads'),
});

export const QueuedVersion = NodeVersion.extend({
  publisher_id: z.string(),
  /** The latest entry of its history is a member's request for a re-review. */
  review_requested: z.boolean(),
});
export const ReviewQueue = z.object({ versions: z.array(QueuedVersion) });
export type QueuedVersion = z.infer<typeof QueuedVersion>;

export const appealVersion = op({
  id: 'appealVersion',
  method: 'POST',
  path: '/publishers/{publisherId}/nodes/{nodeId}/versions/{versionId}/appeal',
  summary: 'Ask for a re-review of a Flagged version, with a message (members); versionId is the id or the semver',
  auth: 'user',
  body: AppealBody,
  response: NodeVersion,
});

export const reviewQueue = op({
  id: 'reviewQueue',
  method: 'GET',
  path: '/admin/review-queue',
  summary: 'Flagged versions, oldest first, with their findings and whether a re-review was asked (admin only)',
  auth: 'user',
  response: ReviewQueue,
});

export const decideVersion = op({
  id: 'decideVersion',
  method: 'POST',
  path: '/admin/nodes/{nodeId}/versions/{versionId}/decision',
  summary: 'Approve, ban or ask for a change of a version, with a reason kept in its history (admin only)',
  auth: 'user',
  body: DecisionBody,
  response: NodeVersion,
});

export const reviewOperations = [appealVersion, reviewQueue, decideVersion];
