// The review flow's page and forms: a member's request for a re-review, the admins' queue and their
// decisions, through the same services as the API (services/review-flow.ts).
import type { Context, Hono } from 'hono';
import { DecisionBody } from '../../contract/review-flow.js';
import { ReviewMessage } from '../../contract/status-reason.js';
import type { ServerContext } from '../context.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import type { AppEnv } from '../route.js';
import { appealVersion, decideVersion, reviewQueue, reviewRequested } from '../services/review-flow.js';
import { form, redirect } from './forms.js';
import { versionHref, type Viewer } from './layout.js';
import { ReviewPage } from './pages/review.js';
import { statusChanged } from '../webhooks/events.js';

function signedIn(viewer: Viewer | null): Viewer {
  if (!viewer) throw forbidden('sign in first');
  return viewer;
}

function messageOf(text: string | undefined): string {
  const parsed = ReviewMessage.safeParse(text ?? '');
  if (!parsed.success) throw badRequest('the message must be 1 to 2000 characters');
  return parsed.data;
}

export async function reviewPage(ctx: ServerContext, _c: Context<AppEnv>, viewer: Viewer | null) {
  const admin = signedIn(viewer);
  const queue = await reviewQueue(ctx.store, admin.principal);
  const items = queue.map(({ version, publisherId }) => ({
    version,
    publisherId,
    requested: reviewRequested(version),
  }));
  return <ReviewPage viewer={admin} items={items} />;
}

export function registerReviewForms(app: Hono<AppEnv>, ctx: ServerContext) {
  form(app, ctx, '/web/nodes/:nodeId/versions/:version/appeal', async (c, viewer, fields) => {
    const principal = signedIn(viewer).principal;
    const nodeId = c.req.param('nodeId') ?? '';
    const node = await ctx.store.getNode(nodeId);
    if (!node) throw notFound(`node ${nodeId} not found`);
    const path = { publisherId: node.publisher_id, nodeId: node.id, versionId: c.req.param('version') ?? '' };
    const { version } = await appealVersion(ctx.store, principal, path, messageOf(fields.message));
    return redirect(c, versionHref(node.id, version.version));
  });

  form(app, ctx, '/web/nodes/:nodeId/versions/:version/decision', async (c, viewer, fields) => {
    const principal = signedIn(viewer).principal;
    const parsed = DecisionBody.safeParse({ decision: fields.decision, message: fields.message });
    if (!parsed.success) throw badRequest('choose a decision and write a reason of 1 to 2000 characters');
    const path = { nodeId: c.req.param('nodeId') ?? '', versionId: c.req.param('version') ?? '' };
    const decided = await decideVersion(ctx.store, principal, path, parsed.data);
    statusChanged(ctx, decided.publisherId, decided.previousStatus, decided.version);
    return redirect(c, '/web/review');
  });
}
