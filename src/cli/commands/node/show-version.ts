// `nodereg node show ID@VERSION`: one version of a node.
import { routes } from '../../../client/routes.js';
import { formatSize } from '../../../contract/size.js';
import { normalizeVersion } from '../../../contract/version.js';
import type { Ctx } from '../../context.js';
import { toCliError } from '../../errors.js';
import { fields, listText, statusText } from '../../format.js';
import { relativeTime } from '../../output.js';
import { checkVersion } from '../../resolve.js';

/**
 * Prints one version of a node, asked as `ID@VERSION`; a short version (`1.0`) means its full form
 * (`1.0.0`), as pyproject.toml versions do.
 */
export async function showVersion(ctx: Ctx, nodeId: string, asked: string): Promise<void> {
  const version = await checkVersion(normalizeVersion(asked)?.version ?? asked, '@<version>');
  const client = await ctx.client();
  const found = await client.call(routes.getNodeVersion, { params: { nodeId, version } }).catch((error: unknown) => {
    throw toCliError(error, { 404: `\`nodereg node versions ${nodeId}\` lists its versions` });
  });
  ctx.out.result(found, () =>
    [
      `${ctx.out.style('bold', `${nodeId} ${found.version}`)}  ${statusText(ctx.out, found.status)}`,
      fields([
        ['deprecated', found.deprecated ? 'yes' : undefined],
        ['status reason', found.status_reason || undefined],
        ['changelog', found.changelog || undefined],
        ['dependencies', found.dependencies?.length ? listText(found.dependencies) : undefined],
        ['size', found.archive_size === undefined ? undefined : formatSize(found.archive_size)],
        ['sha256', found.archive_sha256],
        ['created', found.createdAt ? relativeTime(found.createdAt) : undefined],
      ]),
    ]
      .filter(Boolean)
      .join('\n'),
  );
}
