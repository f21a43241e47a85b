// The registry's writes of the interface, with the semantics of DESIGN.md §3: publish, node, publisher
// and version updates, reviews. Each route parses, calls its service, and renders the view.
import { statusChanged } from '../webhooks/events.js';
import { auditStatus } from '../services/audit.js';
import { addReview, publishVersion, updateNode, updatePublisher, updateVersion } from '../../contract/registry.js';
import { accessTo, allowMutation, requirePublisher } from '../access.js';
import type { RouteModule } from '../context.js';
import { respondWith } from '../node-answers.js';
import { route } from '../route.js';
import { publisherChanges } from '../services/accounts.js';
import { changeNode, changeVersion, nodeToChange, sameId, versionToChange } from '../services/nodes.js';
import { publishTarget, publishVersion as publish } from '../services/publish.js';
import { checkLocalPublish } from '../mirror/service.js';
import { reviewableNode, writeReview } from '../services/reviews.js';
import { oneNodeView, publisherView, versionView } from '../views.js';
import { checkPublishCaps } from '../services/creation-caps.js';

export const registerRegistryRoutes: RouteModule = (app, ctx) => {
  const { store } = ctx;

  route(
    app,
    ctx,
    publishVersion,
    async ({ params, principal, input }) => {
      const target = await publishTarget(store, principal, params);
      // A new local id that upstream holds under another publisher is refused (dependency confusion).
      if (!target.node && ctx.mirror) await checkLocalPublish(ctx.mirror, params.nodeId, target.publisher.id);
      const { body } = input();
      await checkPublishCaps(store, ctx.options.caps, principal!, {
        publisherId: target.publisher.id,
        nodeId: target.node?.id,
        version: body.node_version.version,
      });
      const { version, signedUrl } = await publish(ctx, principal!, target, params.nodeId, body);
      return { node_version: versionView(version, target.publisher.id, ctx.publicUrl()), signedUrl };
    },
    { bodyCredential: 'personal_access_token' },
  );

  route(app, ctx, updateNode, async ({ params, principal, input }) => {
    const target = await nodeToChange(store, principal, params);
    const updated = await changeNode(store, target, params.nodeId, input().body);
    return oneNodeView(store, updated, ctx.publicUrl());
  });

  route(app, ctx, updatePublisher, async ({ params, principal, input }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    const access = await accessTo(store, principal, publisher.id);
    allowMutation(access, 'owner', publisher);
    const { body } = input();
    sameId('id', body.id, params.publisherId);
    const updated = await store.updatePublisher(publisher.id, publisherChanges(body, publisher, access.admin));
    const target = `publisher:${publisher.id}`;
    await auditStatus(store, principal, 'publisher.status', target, publisher.status, updated.status);
    return publisherView(updated, { rows: await store.listMembers(publisher.id), showEmails: true });
  });

  route(app, ctx, updateVersion, async ({ params, principal, input }) => {
    const target = await versionToChange(store, principal, params);
    const updated = await changeVersion(store, target, input().body);
    statusChanged(ctx, target.publisher.id, target.version.status, updated);
    return versionView(updated, target.publisher.id, ctx.publicUrl(), true);
  });

  route(app, ctx, addReview, async ({ c, params, principal, input }) => {
    const node = await reviewableNode(ctx, principal!, params.nodeId);
    const { query } = input();
    return respondWith(c, await writeReview(ctx, principal!, node, query.star));
  });
};
