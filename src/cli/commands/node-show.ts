// `nodereg node show ID` and the versions list, which node.ts registers.
import type { Node, NodeVersion } from '../../contract/resources.js';
import type { Client } from '../../client/index.js';
import type { Ctx } from '../context.js';
import { toCliError } from '../errors.js';
import { fields, listText, statusText, versionTable } from '../format.js';
import { relativeTime } from '../output.js';
import { routes } from '../../client/routes.js';

export const notFoundHint = (nodeId: string) => `check the id with \`nodereg node search ${nodeId}\``;

/**
 * Every version of a node, newest first; a 404 names the node. With `reasons`, the scan's findings
 * come too (the registry sends them to the node's publisher members and admins).
 */
export async function nodeVersions(client: Client, nodeId: string, reasons = false): Promise<NodeVersion[]> {
  try {
    return await client.call(routes.listNodeVersions, { params: { nodeId }, query: reasons ? { include_status_reason: 'true' } : {} });
  } catch (error) {
    throw toCliError(error, { 404: notFoundHint(nodeId) });
  }
}

/** Prints a node (metadata, latest version, rating, downloads) and its versions; `nodeId` is already checked. */
export async function showNode(ctx: Ctx, nodeId: string): Promise<void> {
  const client = await ctx.client();
  const [found, versions] = await Promise.all([
    client.call(routes.getNode, { params: { nodeId } }).catch((error: unknown) => {
      throw toCliError(error, { 404: notFoundHint(nodeId) });
    }),
    nodeVersions(client, nodeId),
  ]);
  ctx.out.result({ node: found, versions }, () => `${describeNode(ctx, found)}\n\n${versionTable(ctx.out, versions)}`);
}

/** The human view of a node (without its versions). */
function describeNode(ctx: Ctx, n: Node): string {
  const title = `${ctx.out.style('bold', n.name ? `${n.name} (${n.id})` : n.id)}  ${statusText(ctx.out, n.status)}`;
  const latest = n.latest_version;
  const body = fields([
    ['publisher', n.publisher?.id],
    ['description', n.description],
    ['author', n.author],
    ['license', n.license],
    ['repository', n.repository],
    ['icon', n.icon],
    ['banner', n.banner_url],
    ['latest', latest ? `${latest.version}${latest.createdAt ? ` (${relativeTime(latest.createdAt)})` : ''}` : 'none active'],
    // stars go from 1, so a mean of 0 means no review at all
    ['rating', n.rating ? `${n.rating.toFixed(1)} / 5` : 'no reviews yet'],
    ['downloads', n.downloads ?? 0],
    ['tags', n.tags?.length ? listText(n.tags) : undefined],
    ['category', n.category],
    ['os', n.supported_os?.length ? listText(n.supported_os) : undefined],
    ['accelerators', n.supported_accelerators?.length ? listText(n.supported_accelerators) : undefined],
    ['requires app', n.supported_appui_version],
    ['requires frontend', n.supported_appui_frontend_version],
    ['status detail', n.status_detail],
    ['created', n.created_at ? relativeTime(n.created_at) : undefined],
  ]);
  return `${title}\n${body}`;
}
