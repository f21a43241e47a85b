// `nodereg node list [--publisher ID] [--mine]`: every node of the registry, of one publisher, or of
// the publishers one belongs to, read a page at a time.
import { type Command, Option } from 'commander';
import type { Client } from '../../../client/index.js';
import { routes } from '../../../client/routes.js';
import { PAGE } from '../../../contract/limits.js';
import type { Node } from '../../../contract/resources.js';
import type { Ctx } from '../../context.js';
import { toCliError } from '../../errors.js';
import { examples } from '../../examples.js';
import { shortStatus } from '../../format.js';
import { table } from '../../output.js';
import { allPages } from '../../pages.js';
import { checkPublisherId } from '../../resolve.js';

interface Options {
  publisher?: string;
  mine?: boolean;
}

/** A publisher's nodes, every page: the list says a next page exists while a page is full. */
const publisherNodes = (client: Client, publisherId: string) =>
  allPages(async (page) => {
    const nodes = await client.call(routes.listPublisherNodes, {
      params: { publisherId },
      query: { page: String(page), limit: String(PAGE.limitMax) },
    });
    return { items: nodes, last: nodes.length < PAGE.limitMax };
  });

/** Every node the registry lists (its active ones), every page. */
const registryNodes = (client: Client) =>
  allPages(async (page) => {
    const list = await client.call(routes.listNodes, { query: { page: String(page), limit: String(PAGE.limitMax) } });
    return { items: list.nodes, last: page >= list.totalPages };
  });

/** The nodes of every publisher the token's owner belongs to (a publisher token: its publisher). */
async function myNodes(client: Client): Promise<Node[]> {
  const me = await client.call(routes.getMe, {});
  const publishers = me.kind === 'user' ? me.publishers.map((p) => p.id) : [me.publisher.id];
  const nodes: Node[] = [];
  for (const id of publishers) nodes.push(...(await publisherNodes(client, id)));
  return nodes;
}

async function listNodes(ctx: Ctx, options: Options): Promise<void> {
  if (options.publisher) await checkPublisherId(options.publisher, '--publisher');
  const client = await ctx.client({ requireToken: Boolean(options.mine) });
  const nodes = await (options.mine
    ? myNodes(client)
    : options.publisher
      ? publisherNodes(client, options.publisher)
      : registryNodes(client)
  ).catch((error: unknown) => {
    throw toCliError(error);
  });
  const mine = options.mine ? 'your publishers have no node' : undefined;
  ctx.out.result(nodes, () =>
    nodes.length
      ? table(
          nodes.map((n) => [
            n.id,
            n.name ?? '',
            n.latest_version?.version ?? '-',
            shortStatus(n.status),
            n.publisher?.id ?? '',
          ]),
          ['ID', 'NAME', 'LATEST', 'STATUS', 'PUBLISHER'],
        )
      : (mine ?? (options.publisher ? `publisher ${options.publisher} has no node` : 'the registry lists no node')),
  );
}

export function registerList(node: Command, ctx: Ctx): void {
  examples(
    node
      .command('list')
      .description(
        'list nodes, every page: all the registry lists, those of one publisher (--publisher), or of the publishers you belong to (--mine)',
      )
      .option('--publisher <id>', "only this publisher's nodes (its members also see those not active)")
      .addOption(
        new Option('--mine', 'only the nodes of the publishers you belong to (needs a token)').conflicts('publisher'),
      )
      .action((options: Options) => listNodes(ctx, options)),
    ['nodereg node list --mine', 'nodereg node list --publisher my-team --json', 'nodereg node list'],
  );
}
