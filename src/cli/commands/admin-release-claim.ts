// `nodereg admin release-claim`: frees a version whose upload's server died during the put.
import type { Command } from 'commander';
import { routes } from '../../client/routes.js';
import type { Ctx } from '../context.js';
import { toCliError } from '../errors.js';
import { examples } from '../examples.js';
import { checkNodeId, checkVersion } from '../resolve.js';

export function registerReleaseClaim(admin: Command, ctx: Ctx): void {
  examples(
    admin
      .command('release-claim <node> <version>')
      .description(
        'release the claim an upload left on a version when its server died during the put (and remove what it stored), so that the version can be uploaded again at once',
      )
      .action(async (node: string, version: string) => {
        const nodeId = await checkNodeId(node, '<node>');
        const semver = await checkVersion(version, '<version>');
        const client = await ctx.client({ requireToken: true });
        await client.call(routes.releaseArchiveClaim, { params: { nodeId, version: semver } }).catch((error) => {
          throw toCliError(error, {
            403: 'releasing a claim takes an admin token (`nodereg whoami` shows whether yours is one)',
            404: `see the version's status with \`nodereg node versions ${nodeId}\``,
          });
        });
        ctx.out.result(
          { node_id: nodeId, version: semver, released: true },
          `released the claim on ${nodeId} ${semver}: its archive can be uploaded again (run publish again)`,
        );
      }),
    ['nodereg admin release-claim my-node 1.2.0'],
  );
}
