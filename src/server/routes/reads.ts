// Reads of DESIGN.md §3: no token needed; a token, when sent, lets members and admins see more.
import {
  bulkNodeVersions,
  getNode,
  getNodeVersion,
  listApprovedFindings,
  getPublisher,
  installNode,
  listNodeVersions,
  listNodes,
  listPublisherNodes,
  searchNodes,
} from '../../contract/registry.js';
import { accessTo, canSeeNode, readableNode, requirePublisher } from '../access.js';
import { NODE_STATUS, searchTerms } from '../../contract/limits.js';
import type { RouteModule } from '../context.js';
import { banned } from '../errors.js';
import { route } from '../route.js';
import type { NodeRow, Page } from '../store/registry-store.js';
import { respondWith } from '../node-answers.js';
import { serialiseInTurns } from '../version-lists.js';
import { nodeViews, publisherView, versionView } from '../views.js';
import { findVersion, installableVersion, nodeAnswer } from '../services/nodes.js';
import { approvedFindingsOf } from '../services/approvals.js';
import { namedMatch, searchMatch, withKept, type KeptMatch } from '../mirror/lists.js';
import { bulkVersions, namedNodes, nodesDefining, withStatuses } from '../services/field-reads.js';

export const registerReadRoutes: RouteModule = (app, ctx) => {
  const { store } = ctx;

  // With a mirror, the nodes kept from upstream that match follow the local ones (mirror/lists.ts).
  const nodePage = async (found: Page<NodeRow>, page: number, limit: number, kept: KeptMatch) => {
    const local = { nodes: await nodeViews(store, found.rows, ctx.publicUrl()), total: found.total };
    const { nodes, total } = await withKept(ctx, local, (page - 1) * limit, limit, kept);
    return { nodes, total, page, limit, totalPages: Math.ceil(total / limit) };
  };

  route(app, ctx, listNodes, async ({ input, principal }) => {
    const { query } = input();
    const offset = (query.page - 1) * query.limit;
    const found = query.node_id?.length
      ? await namedNodes(store, principal, query.node_id, {
          includeBanned: query.include_banned === 'true',
          offset,
          limit: query.limit,
        })
      : await store.listNodes({ sort: query.sort, offset, limit: query.limit });
    return nodePage(found, query.page, query.limit, query.node_id?.length ? namedMatch(query.node_id) : () => true);
  });

  route(app, ctx, searchNodes, async ({ input }) => {
    const { query } = input();
    const text = query.q || (query.search ?? '');
    const terms = searchTerms(text);
    const offset = (query.page - 1) * query.limit;
    // An empty query lists every node; one of punctuation alone has no word to match, so matches nothing.
    const found = query.comfy_node_search
      ? await nodesDefining(store, query.comfy_node_search, { offset, limit: query.limit })
      : terms.length
        ? await store.searchNodes({ terms, offset, limit: query.limit })
        : text.trim()
          ? { rows: [], total: 0 }
          : await store.listNodes({ sort: 'created_at', offset, limit: query.limit });
    // The kept nodes are searched by words; a class search finds only local ones.
    return nodePage(found, query.page, query.limit, query.comfy_node_search ? () => false : searchMatch(text));
  });

  route(app, ctx, getNode, async ({ c, params, principal }) =>
    respondWith(c, await nodeAnswer(ctx, principal, params.nodeId)),
  );

  // The scan's findings go to the node's publisher members and admins only (DESIGN.md §10).
  route(app, ctx, listNodeVersions, async ({ c, params, principal, input }) => {
    const { node, access } = await readableNode(store, principal, params.nodeId);
    const { query } = input();
    const showFindings = access.member && query.include_status_reason === 'true';
    const body = async () =>
      serialiseInTurns(withStatuses(await store.listVersions(node.id), query.statuses), (version) =>
        versionView(version, node.publisher_id, ctx.publicUrl(), showFindings),
      );
    // The kept list is the whole one: a list with findings or of some statuses is built for the request.
    const kept = !showFindings && !query.statuses?.length;
    return c.body(await (kept ? ctx.versionLists.body(node, body) : body()), 200, {
      'content-type': 'application/json',
    });
  });

  route(app, ctx, getNodeVersion, async ({ params, principal }) => {
    const { node, access } = await readableNode(store, principal, params.nodeId);
    return versionView(
      await findVersion(store, node, params.version),
      node.publisher_id,
      ctx.publicUrl(),
      access.member,
    );
  });

  route(app, ctx, listApprovedFindings, async ({ params, principal }) =>
    approvedFindingsOf(store, principal, params.nodeId),
  );

  route(app, ctx, installNode, async ({ params, principal, input }) => {
    const { node } = await readableNode(store, principal, params.nodeId);
    const version = await installableVersion(store, node, input().query.version);
    return versionView(version, node.publisher_id, ctx.publicUrl());
  });

  route(app, ctx, bulkNodeVersions, async ({ principal, input }) => ({
    node_versions: await bulkVersions(store, principal, input().body.node_versions, ctx.publicUrl()),
  }));

  registerPublisherReads(app, ctx);
};

/** A publisher and its list of nodes. */
const registerPublisherReads: RouteModule = (app, ctx) => {
  const { store } = ctx;
  route(app, ctx, getPublisher, async ({ params, principal }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    const access = await accessTo(store, principal, publisher.id);
    return publisherView(publisher, { rows: await store.listMembers(publisher.id), showEmails: access.member });
  });

  route(app, ctx, listPublisherNodes, async ({ c, params, principal, input }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    const access = await accessTo(store, principal, publisher.id);
    if (publisher.status === 'PublisherStatusBanned' && !access.admin)
      throw banned(`publisher ${publisher.id} is banned: its nodes are unavailable`);
    const { page, limit } = input().query;
    const statuses = NODE_STATUS.filter((status) => canSeeNode(access, { status }));
    // One more than the page says whether a next page exists, without counting them all.
    const rows = await store.listPublisherNodes(publisher.id, {
      statuses,
      offset: (page - 1) * limit,
      limit: limit + 1,
    });
    const more = rows.length > limit;
    const next = `${ctx.publicUrl()}/publishers/${encodeURIComponent(publisher.id)}/nodes?page=${page + 1}&limit=${limit}`;
    return c.json(
      await nodeViews(store, rows.slice(0, limit), ctx.publicUrl()),
      200,
      more ? { Link: `<${next}>; rel="next"` } : {},
    );
  });
};
