// `nodereg version appeal`: a publisher member asks for a re-review of a Flagged version, with a message
// the admins read in their queue (DESIGN.md §14).
import type { Command } from 'commander';
import { routes } from '../../client/routes.js';
import type { Ctx } from '../context.js';
import { toCliError } from '../errors.js';
import { examples } from '../examples.js';
import { statusText } from '../format.js';
import { checkNodeId, checkPublisherId, checkVersion, nodePublisher, precheck } from '../resolve.js';

export function registerAppeal(version: Command, ctx: Ctx): void {
  examples(
    version
      .command('appeal <nodeId> <version>')
      .description('ask the admins for a re-review of a Flagged version, with a message kept in its status history')
      .requiredOption('--message <text>', 'what changed, or why the flag is wrong')
      .option('--publisher <id>', "the node's publisher (default: the node's own)")
      .action(async (nodeId: string, semver: string, o: { message: string; publisher?: string }) => {
        await checkNodeId(nodeId);
        const wanted = await checkVersion(semver);
        if (o.publisher) await checkPublisherId(o.publisher, '--publisher');
        const checked = await precheck(
          routes.appealVersion,
          { body: { message: o.message } },
          { message: '--message' },
        );
        const client = await ctx.client({ requireToken: true });
        const publisherId = await nodePublisher(client, nodeId, o.publisher);
        const appealed = await client
          .call(routes.appealVersion, { params: { publisherId, nodeId, versionId: wanted }, body: checked.body })
          .catch((error) => {
            throw toCliError(error, {
              409: `only a Flagged version can be re-reviewed; see \`nodereg node versions ${nodeId}\``,
            });
          });
        ctx.out.result(
          appealed,
          `asked for a re-review of ${nodeId} ${appealed.version} (status ${statusText(ctx.out, appealed.status)})`,
        );
      }),
    ['nodereg version appeal my-node 1.2.0 --message "the flagged call reads a bundled file"'],
  );
}
