import type { Command } from 'commander';
import type { Ctx } from '../context.js';
import { toCliError } from '../errors.js';
import { precheck } from '../resolve.js';
import { examples } from '../examples.js';
import { routes } from '../../client/routes.js';
import { registerUserList } from './user/list.js';
import { registerUserLifecycle } from './user/lifecycle.js';

export function register(program: Command, ctx: Ctx): void {
  const user = examples(program.command('user').description('manage users (admins only)'), [
    'nodereg user create alice --email alice@example.com',
    'nodereg user list',
    'nodereg user disable alice',
    'nodereg user delete bob --transfer-to alice',
  ]);

  examples(
    user
      .command('create <name>')
      .description("create a user (admin only) and print the new user's token once on stdout")
      .option('--email <address>', 'email address')
      .option('--admin', 'make the user an admin')
      .action(async (name: string, o: { email?: string; admin?: boolean }) => {
        const body = { name, email: o.email, admin: o.admin || undefined };
        const checked = await precheck(routes.createUser, { body }, { name: '<name>' });
        const client = await ctx.client({ requireToken: true });
        const created = await client.call(routes.createUser, checked).catch((error) => {
          throw toCliError(error, {
            403: 'creating users takes an admin token (`nodereg whoami` shows whether yours is one)',
          });
        });
        // stdout carries the token alone, as `token create` does
        ctx.out.result(created, created.token);
        if (!ctx.out.json) {
          ctx.out.success(
            `created user ${created.user.name} (${created.user.id})${created.user.admin ? ', an admin' : ''}`,
          );
          ctx.out.hint(
            'give the token to its owner now: it is shown only this once; they can run `nodereg login` with it',
          );
        }
      }),
    ['nodereg user create alice --email alice@example.com', 'ALICE_TOKEN=$(nodereg user create alice)'],
  );
  registerUserList(user, ctx);
  registerUserLifecycle(user, ctx);
}
