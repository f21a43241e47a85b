import type { Command } from 'commander';
import type { Ctx } from '../context.js';
import { toCliError } from '../errors.js';
import { describeMe } from '../format.js';
import { examples } from '../examples.js';
import { routes } from '../../client/routes.js';

export function register(program: Command, ctx: Ctx): void {
  examples(
    program
      .command('whoami')
      .description('show whom the token belongs to: a user and their publishers, or a publisher access token')
      .action(async () => {
        const client = await ctx.client({ requireToken: true });
        const me = await client.call(routes.getMe, {}, { exact: true }).catch((error) => {
          throw toCliError(error);
        });
        ctx.out.result(me, () => {
          const lines = [describeMe(me)];
          if (me.kind === 'user') {
            const none = ctx.out.invoked('publishers: none yet (create one: nodereg publisher create <id>)');
            lines.push(
              me.publishers.length ? `publishers: ${me.publishers.map((p) => `${p.id} (${p.role})`).join(', ')}` : none,
            );
          }
          lines.push(`registry: ${client.baseUrl}`);
          return lines.join('\n');
        });
        if (ctx.globals().verbose) ctx.out.info(ctx.describeConnection(await ctx.connection()));
      }),
    ['nodereg whoami', 'nodereg whoami --json'],
  );
}
