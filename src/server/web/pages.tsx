// The reads behind each page: the same services and access rules the JSON routes use.
import type { Context } from 'hono';
import { NODE_STATUS } from '../../contract/limits.js';
import { parseStatusReason } from '../../contract/status-reason.js';
import { accessTo, canSeeNode, readableNode, requirePublisher } from '../access.js';
import type { ServerContext } from '../context.js';
import { banned } from '../errors.js';
import { findVersion, nodeAnswer } from '../services/nodes.js';
import type { Viewer } from './layout.js';
import { findNodes, HomePage, homeQuery } from './pages/home.js';
import { NodePage } from './pages/node.js';
import { PublisherPage } from './pages/publisher.js';
import { VersionPage } from './pages/version.js';

/** The nodes a publisher page lists at most. */
const PUBLISHER_NODES_SHOWN = 200;

export async function homePage(ctx: ServerContext, c: Context, viewer: Viewer | null) {
  const query = homeQuery((name) => c.req.query(name));
  const { nodes, total } = await findNodes(ctx, query);
  // The filters offer the values the nodes found without them have.
  const filtered = Boolean(query.os || query.accelerator || query.appui);
  const options = filtered ? (await findNodes(ctx, { ...query, os: '', accelerator: '', appui: '' })).nodes : nodes;
  return <HomePage viewer={viewer} query={query} nodes={nodes} total={total} options={options} />;
}

export async function nodePage(ctx: ServerContext, c: Context, viewer: Viewer | null) {
  const principal = viewer?.principal ?? null;
  const answer = await nodeAnswer(ctx, principal, c.req.param('nodeId') ?? '');
  const node = answer.view;
  const versions = await ctx.store.listVersions(node.id);
  const latestId = node.latest_version?.id;
  const classes = latestId ? await ctx.store.listNodeClasses(latestId) : [];
  return <NodePage viewer={viewer} data={{ node, versions, classes, registryUrl: ctx.publicUrl() }} />;
}

export async function publisherPage(ctx: ServerContext, c: Context, viewer: Viewer | null) {
  const publisher = await requirePublisher(ctx.store, c.req.param('publisherId') ?? '');
  const access = await accessTo(ctx.store, viewer?.principal ?? null, publisher.id);
  if (publisher.status === 'PublisherStatusBanned' && !access.admin)
    throw banned(`publisher ${publisher.id} is banned: its nodes are unavailable`);
  const statuses = NODE_STATUS.filter((status) => canSeeNode(access, { status }));
  const nodes = await ctx.store.listPublisherNodes(publisher.id, { statuses, offset: 0, limit: PUBLISHER_NODES_SHOWN });
  const members = await ctx.store.listMembers(publisher.id);
  return <PublisherPage viewer={viewer} publisher={publisher} nodes={nodes} members={members} />;
}

export async function versionPage(ctx: ServerContext, c: Context, viewer: Viewer | null) {
  const { node, access } = await readableNode(ctx.store, viewer?.principal ?? null, c.req.param('nodeId') ?? '');
  const version = await findVersion(ctx.store, node, c.req.param('version') ?? '');
  const structured = parseStatusReason(version.status_reason);
  const data = {
    node,
    version,
    reason: structured ? structured.message : (version.status_reason ?? ''),
    history: structured?.statusHistory ?? [],
    findings: access.member ? (version.findings ?? []) : undefined,
    canAppeal: access.member && version.status === 'NodeVersionStatusFlagged',
  };
  return <VersionPage viewer={viewer} data={data} />;
}
