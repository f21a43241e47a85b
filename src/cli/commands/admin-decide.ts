// `nodereg admin decide`: approve (Active), ban, or ask the publisher for a change, with the reason
// the publisher reads; kept as an entry of the version's status history (DESIGN.md §14).
import { type Command, Option } from 'commander';
import { routes } from '../../client/routes.js';
import { REVIEW_DECISIONS } from '../../contract/limits.js';
import type { Ctx } from '../context.js';
import { toCliError } from '../errors.js';
import { examples } from '../examples.js';
import { statusText } from '../format.js';
import { checkNodeId, checkVersion, precheck } from '../resolve.js';

export function registerDecide(admin: Command, ctx: Ctx): void {
  examples(
    admin
      .command('decide <nodeId> <version>')
      .description('approve, ban or ask for a change of a version, with a reason kept in its status history (admins)')
      .addOption(new Option('--decision <decision>', 'what to decide').choices(REVIEW_DECISIONS).makeOptionMandatory())
      .requiredOption('--message <text>', 'the reason the publisher reads')
      .action(async (nodeId: string, semver: string, o: { decision: string; message: string }) => {
        await checkNodeId(nodeId);
        const wanted = await checkVersion(semver);
        const body = { decision: o.decision as (typeof REVIEW_DECISIONS)[number], message: o.message };
        const checked = await precheck(
          routes.decideVersion,
          { body },
          { message: '--message', decision: '--decision' },
        );
        const client = await ctx.client({ requireToken: true });
        const decided = await client
          .call(routes.decideVersion, { params: { nodeId, versionId: wanted }, body: checked.body })
          .catch((error) => {
            throw toCliError(error, { 403: 'deciding a review takes an admin token' });
          });
        ctx.out.result(decided, `${nodeId} ${decided.version} is now ${statusText(ctx.out, decided.status)}`);
      }),
    [
      'nodereg admin decide my-node 1.2.0 --decision approve --message "the call reads a bundled file"',
      'nodereg admin decide my-node 1.2.0 --decision ban --message "downloads and runs code at import"',
    ],
  );
}
