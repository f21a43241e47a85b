// `nodereg publisher trust add|list|remove`: the CI workflows that publish for a publisher without a
// stored token (DESIGN.md §15). Registered under `publisher` by commands/publisher.ts.
import type { Command } from 'commander';
import { routes } from '../../../client/routes.js';
import type { Ctx } from '../../context.js';
import { toCliError } from '../../errors.js';
import { examples } from '../../examples.js';
import { relativeTime, table } from '../../output.js';
import { checkPublisherId } from '../../resolve.js';

interface AddOptions {
  repository: string;
  workflow: string;
  issuer?: string;
  environment?: string;
  ref?: string;
  node?: string;
}

const ownerOnly = (id: string) => ({ 403: `only an owner of ${id} may manage its trusts` });

function registerAdd(trust: Command, ctx: Ctx): void {
  examples(
    trust
      .command('add <id>')
      .description('trust a CI workflow to publish for the publisher (or one node) with its OIDC token')
      .requiredOption('--repository <owner/name>', 'the repository whose CI job may publish')
      .requiredOption('--workflow <file>', 'the workflow file, such as publish.yml (under .github/workflows/)')
      .option('--issuer <name>', 'the CI platform: github (default), gitlab, or one the registry was configured with')
      .option('--environment <name>', 'the deployment environment the job must run in')
      .option('--ref <pattern>', 'the git ref the job must run on; * matches anything (refs/tags/v*)')
      .option('--node <nodeId>', 'publish this node only')
      .action(async (id: string, o: AddOptions) => {
        await checkPublisherId(id, '<id>');
        const client = await ctx.client({ requireToken: true });
        const body = {
          repository: o.repository,
          workflow: o.workflow,
          ...(o.issuer ? { issuer: o.issuer } : {}),
          ...(o.environment ? { environment: o.environment } : {}),
          ...(o.ref ? { ref: o.ref } : {}),
          ...(o.node ? { node_id: o.node } : {}),
        };
        const added = await client.call(routes.addTrust, { params: { publisherId: id }, body }).catch((error) => {
          throw toCliError(error, ownerOnly(id));
        });
        ctx.out.result(
          added,
          `trusted ${added.repository} (${added.workflow}) to publish for ${id}: trust ${added.id}`,
        );
        if (!ctx.out.json)
          ctx.out.hint('in that workflow, give the job `permissions: id-token: write` and run `nodereg publish`');
      }),
    [
      'nodereg publisher trust add acme --repository acme/my-node --workflow publish.yml',
      'nodereg publisher trust add acme --repository acme/my-node --workflow release.yml --environment release --ref "refs/tags/v*"',
    ],
  );
}

export function registerTrustCommands(publisher: Command, ctx: Ctx): void {
  const trust = examples(
    publisher
      .command('trust')
      .description('the CI workflows that publish for a publisher without a stored token (owner only)'),
    [
      'nodereg publisher trust add acme --repository acme/my-node --workflow publish.yml',
      'nodereg publisher trust list acme',
    ],
  );
  registerAdd(trust, ctx);
  examples(
    trust
      .command('list <id>')
      .description("list a publisher's trusted CI workflows")
      .action(async (id: string) => {
        await checkPublisherId(id, '<id>');
        const client = await ctx.client({ requireToken: true });
        const trusts = await client.call(routes.listTrusts, { params: { publisherId: id } }).catch((error) => {
          throw toCliError(error, ownerOnly(id));
        });
        ctx.out.result(trusts, () =>
          trusts.length
            ? table(
                trusts.map((t) => [
                  t.id,
                  t.issuer,
                  t.repository,
                  t.workflow,
                  t.environment ?? '',
                  t.ref ?? '',
                  t.node_id ?? '(any)',
                  relativeTime(t.created_at),
                ]),
                ['ID', 'ISSUER', 'REPOSITORY', 'WORKFLOW', 'ENVIRONMENT', 'REF', 'NODE', 'ADDED'],
              )
            : `${id} trusts no CI workflow`,
        );
      }),
    ['nodereg publisher trust list acme'],
  );
  examples(
    trust
      .command('remove <id> <trustId>')
      .description('stop trusting a CI workflow; the tokens it was given stop working')
      .action(async (id: string, trustId: string) => {
        await checkPublisherId(id, '<id>');
        const client = await ctx.client({ requireToken: true });
        await client.call(routes.removeTrust, { params: { publisherId: id, trustId } }).catch((error) => {
          throw toCliError(error, {
            ...ownerOnly(id),
            404: `${id} has no trust ${trustId} (\`nodereg publisher trust list ${id}\` lists them)`,
          });
        });
        ctx.out.result({ publisher_id: id, trust_id: trustId, removed: true }, `removed trust ${trustId} of ${id}`);
      }),
    ['nodereg publisher trust remove acme 5b0e6c1e-8f3a-4a52-9d1c-2f4b7c9e0a11'],
  );
}
