// `nodereg version withdraw NODE VERSION`: a version withdrawn for good. Its number can never be
// published again, so the command says so and asks first (on a terminal), or wants --yes (elsewhere).
import type { Command } from 'commander';
import { routes } from '../../../client/routes.js';
import type { Ctx } from '../../context.js';
import { CliError, EXIT, toCliError } from '../../errors.js';
import { examples } from '../../examples.js';
import { statusText } from '../../format.js';
import { checkNodeId, checkPublisherId, checkVersion, findVersion, nodePublisher } from '../../resolve.js';
import { nodeVersions } from '../node-show.js';

const WITHDRAWN = 'NodeVersionStatusDeleted';

const forGood = (nodeId: string, version: string) =>
  `${nodeId} ${version} stops being installable, and the version number ${version} can never be published again`;

export function registerWithdraw(version: Command, ctx: Ctx): void {
  examples(
    version
      .command('withdraw <nodeId> <version>')
      .description(
        'withdraw a version for good (members of its publisher): it is no longer installed, and its number can never be published again. Asks first on a terminal; elsewhere needs --yes',
      )
      .option('--publisher <id>', "the node's publisher (default: the node's own)")
      .option('--yes', 'withdraw without asking (CI, scripts)')
      .action(async (nodeId: string, semver: string, o: { publisher?: string; yes?: boolean }) => {
        await checkNodeId(nodeId);
        await checkVersion(semver);
        if (o.publisher) await checkPublisherId(o.publisher, '--publisher');
        const client = await ctx.client({ requireToken: true });
        const [publisherId, versions] = await Promise.all([
          nodePublisher(client, nodeId, o.publisher),
          nodeVersions(client, nodeId),
        ]);
        const target = findVersion(versions, nodeId, semver);
        if (target.status === WITHDRAWN) {
          ctx.out.result(target, `${nodeId} ${target.version} is already withdrawn`);
          return;
        }
        await confirmWithdraw(ctx, nodeId, target.version, o.yes);
        const updated = await client
          .call(routes.updateVersion, {
            params: { publisherId, nodeId, versionId: target.id },
            body: { status: WITHDRAWN },
          })
          .catch((error) => {
            throw toCliError(error, { 403: `only members of ${publisherId} and admins may withdraw its versions` });
          });
        ctx.out.result(
          updated,
          `withdrew ${nodeId} ${updated.version} (status ${statusText(ctx.out, updated.status)}): it can never be published again; publish the fix as a new version`,
        );
      }),
    ['nodereg version withdraw my-node 1.2.0', 'nodereg version withdraw my-node 1.2.0 --yes   # CI'],
  );
}

/** Asks on a terminal; elsewhere --yes must say it. */
async function confirmWithdraw(ctx: Ctx, nodeId: string, version: string, yes?: boolean): Promise<void> {
  if (yes) return;
  if (!ctx.interactive())
    throw new CliError(
      `withdrawing is for good and nothing can be asked here: ${forGood(nodeId, version)}`,
      EXIT.invalid,
      'invalid_input',
      `if that is what you want, run \`nodereg version withdraw ${nodeId} ${version} --yes\``,
    );
  const { confirm } = await ctx.prompts();
  const sure = await confirm({ message: `${forGood(nodeId, version)}. Withdraw it?`, default: false });
  if (!sure) throw new CliError(`kept ${nodeId} ${version}: nothing was changed`, EXIT.interrupted, 'interrupted');
}
