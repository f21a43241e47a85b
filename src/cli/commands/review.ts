import type { Command } from 'commander';
import { STAR } from '../../contract/limits.js';
import type { Ctx } from '../context.js';
import { invalidInput, toCliError } from '../errors.js';
import { shellWord } from '../invocation.js';
import { checkNodeId, precheck } from '../resolve.js';
import { examples } from '../examples.js';
import { notFoundHint } from './node-show.js';
import { routes } from '../../client/routes.js';

export function register(program: Command, ctx: Ctx): void {
  examples(
    program
      .command('review <nodeId>')
      .description(`rate a node with ${STAR.min} to ${STAR.max} stars; a second review of yours replaces the first`)
      .option('--star <n>', `stars, an integer from ${STAR.min} to ${STAR.max} (required)`)
      // A number typed after the id (`review my-node 5`) is answered with the line that works.
      .allowExcessArguments()
      .action(async (nodeId: string, o: { star?: string }, command: Command) => {
        const [extra] = command.args.slice(1);
        const star = o.star ?? (extra && /^\d+$/.test(extra) ? extra : undefined);
        if (o.star === undefined || command.args.length > 1)
          throw invalidInput(
            o.star === undefined ? 'the stars are missing: they go in --star' : `unexpected argument "${extra}"`,
            star
              ? `run \`nodereg review ${shellWord(nodeId)} --star ${shellWord(star)}\``
              : `give them as --star N, N from ${STAR.min} to ${STAR.max}`,
          );
        await checkNodeId(nodeId);
        const query = { star: o.star };
        const checked = await precheck(routes.addReview, { query });
        const client = await ctx.client({ requireToken: true });
        const node = await client
          .call(routes.addReview, { params: { nodeId }, query: checked.query })
          .catch((error) => {
            throw toCliError(error, { 404: notFoundHint(nodeId) });
          });
        ctx.out.result(
          node,
          `rated ${node.id} ${Number(o.star)} star${Number(o.star) === 1 ? '' : 's'}; its rating is now ${(node.rating ?? 0).toFixed(2)}`,
        );
      }),
    ['nodereg review my-node --star 5'],
  );
}
