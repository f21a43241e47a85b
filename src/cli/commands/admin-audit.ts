// `nodereg admin audit`: the newest entries of the registry's audit log (admins only).
import type { Command } from 'commander';
import { routes } from '../../client/routes.js';
import { PAGE } from '../../contract/limits.js';
import type { Ctx } from '../context.js';
import { toCliError } from '../errors.js';
import { examples } from '../examples.js';
import { relativeTime, table } from '../output.js';
import { precheck } from '../resolve.js';

export function registerAudit(admin: Command, ctx: Ctx): void {
  examples(
    admin
      .command('audit')
      .description(
        'show the audit log, newest first: who disabled or deleted users, revoked tokens, changed members or statuses, released claims (admins only)',
      )
      .option('--limit <n>', `entries to show (${PAGE.limitMin}-${PAGE.limitMax})`, String(PAGE.defaultLimit))
      .option('--action <action>', 'only this action, e.g. user.disable, token.revoke, version.status')
      .option('--target <target>', 'only this target, e.g. user:ID, publisher:ID, version:NODE@VERSION')
      .action(async (o: { limit: string; action?: string; target?: string }) => {
        const { query } = await precheck(routes.listAudit, {
          query: { limit: o.limit, action: o.action, target: o.target },
        });
        const client = await ctx.client({ requireToken: true });
        const page = await client.call(routes.listAudit, { query }).catch((error) => {
          throw toCliError(error, {
            403: 'the audit log takes an admin token (`nodereg whoami` shows whether yours is one)',
          });
        });
        ctx.out.result(page.entries, () =>
          page.entries.length
            ? table(
                page.entries.map((e) => [
                  relativeTime(e.at),
                  e.actor_id ?? '-',
                  e.action,
                  e.target,
                  Object.keys(e.details).length ? JSON.stringify(e.details) : '',
                ]),
                ['WHEN', 'ACTOR', 'ACTION', 'TARGET', 'DETAILS'],
              )
            : 'no entries',
        );
      }),
    ['nodereg admin audit', 'nodereg admin audit --action user.delete --json', 'nodereg admin audit --limit 100'],
  );
}
