// `nodereg node show ID` and the versions list, which node.ts registers.
import type { Node, NodeVersion } from '../../contract/resources.js';
import type { ComfyNode } from '../../contract/reads.js';
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
    return await client.call(routes.listNodeVersions, {
      params: { nodeId },
      query: reasons ? { include_status_reason: 'true' } : {},
    });
  } catch (error) {
    throw toCliError(error, { 404: notFoundHint(nodeId) });
  }
}

/**
 * Prints a node (metadata, latest version, rating, downloads) and its versions; `nodeId` is already
 * checked. With `classes`, the node classes its latest version defines too.
 */
export async function showNode(ctx: Ctx, nodeId: string, classes = false): Promise<void> {
  const client = await ctx.client();
  const [found, versions] = await Promise.all([
    client.call(routes.getNode, { params: { nodeId } }).catch((error: unknown) => {
      throw toCliError(error, { 404: notFoundHint(nodeId) });
    }),
    nodeVersions(client, nodeId),
  ]);
  if (!classes)
    return ctx.out.result(
      { node: found, versions },
      () => `${describeNode(ctx, found)}\n\n${versionTable(ctx.out, versions)}`,
    );
  const latest = found.latest_version;
  const defined = latest ? await latestClasses(client, found.id, latest.version) : [];
  const shown = latest
    ? `node classes of ${latest.version} (${defined.length}):\n${defined.map((c) => `  ${c.comfy_node_name}`).join('\n') || '  none found'}`
    : 'node classes: no active version';
  ctx.out.result(
    { node: found, versions, classes: defined },
    () => `${describeNode(ctx, found)}\n\n${versionTable(ctx.out, versions)}\n\n${shown}`,
  );
}

/** Every class a version defines, page after page. */
async function latestClasses(client: Client, nodeId: string, version: string): Promise<ComfyNode[]> {
  const all: ComfyNode[] = [];
  for (let page = 1; ; page++) {
    const answer = (await client.call(routes.listVersionComfyNodes, {
      params: { nodeId, version },
      query: { page: String(page), limit: '100' },
    })) as {
      comfy_nodes: ComfyNode[] | null;
      totalNumberOfPages: number;
    };
    all.push(...(answer.comfy_nodes ?? []));
    if (page >= answer.totalNumberOfPages) return all;
  }
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
    [
      'latest',
      latest ? `${latest.version}${latest.createdAt ? ` (${relativeTime(latest.createdAt)})` : ''}` : 'none active',
    ],
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
