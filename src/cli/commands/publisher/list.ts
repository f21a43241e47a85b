// `nodereg publisher list`: the publishers one belongs to, with one's role (the registry lists no others).
import type { Command } from 'commander';
import { routes } from '../../../client/routes.js';
import type { Ctx } from '../../context.js';
import { examples } from '../../examples.js';
import { table } from '../../output.js';

export function registerList(publisher: Command, ctx: Ctx): void {
  examples(
    publisher
      .command('list')
      .description('list the publishers you belong to and your role in each (a publisher token: its publisher)')
      .option('--mine', 'only your own publishers (the registry lists no others: the same list)')
      .action(async () => {
        const client = await ctx.client({ requireToken: true });
        const me = await client.call(routes.getMe, {});
        const mine = me.kind === 'user' ? me.publishers : [{ id: me.publisher.id, role: 'token' }];
        ctx.out.result(mine, () =>
          mine.length
            ? table(
                mine.map((p) => [p.id, p.role]),
                ['PUBLISHER', 'ROLE'],
              )
            : 'you belong to no publisher',
        );
      }),
    ['nodereg publisher list', 'nodereg publisher list --json'],
  );
}
