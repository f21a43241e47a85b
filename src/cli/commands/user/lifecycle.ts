// `nodereg user disable|enable|delete <user>`: an admin's changes to an account, the user named by
// id, e-mail or name.
import { Option, type Command } from 'commander';
import { routes } from '../../../client/routes.js';
import type { Ctx } from '../../context.js';
import { toCliError } from '../../errors.js';
import { examples } from '../../examples.js';
import { ADMIN_HINT } from './list.js';

const hints = { 403: ADMIN_HINT, 404: '`nodereg user list` lists the users by id, name and e-mail' };

function registerSwitch(user: Command, ctx: Ctx, verb: 'disable' | 'enable'): void {
  const description =
    verb === 'disable'
      ? 'disable a user (admins only): their tokens are refused at once, on every instance, until enabled again (never the last admin)'
      : 'enable a disabled user again (admins only): their tokens work again';
  examples(
    user
      .command(`${verb} <user>`)
      .description(description)
      .action(async (named: string) => {
        const client = await ctx.client({ requireToken: true });
        const route = verb === 'disable' ? routes.disableUser : routes.enableUser;
        const changed = await client.call(route, { params: { user: named } }).catch((error) => {
          throw toCliError(error, hints);
        });
        ctx.out.result(changed, `${verb}d user ${changed.name} (${changed.id})`);
      }),
    [`nodereg user ${verb} alice@example.com`],
  );
}

export function registerUserLifecycle(user: Command, ctx: Ctx): void {
  registerSwitch(user, ctx, 'disable');
  registerSwitch(user, ctx, 'enable');
  examples(
    user
      .command('delete <user>')
      .description(
        'delete a user (admins only): their tokens are revoked and their memberships go to --transfer-to or are removed (--remove-memberships)',
      )
      .addOption(
        new Option(
          '--transfer-to <user>',
          'the user who takes over their memberships (keeping the higher role)',
        ).conflicts('removeMemberships'),
      )
      .option('--remove-memberships', 'remove their memberships (refused where they are the only owner)')
      .action(async (named: string, o: { transferTo?: string; removeMemberships?: boolean }) => {
        const client = await ctx.client({ requireToken: true });
        const query = {
          ...(o.transferTo ? { transfer_to: o.transferTo } : {}),
          ...(o.removeMemberships ? { remove_memberships: 'true' as const } : {}),
        };
        await client.call(routes.deleteUser, { params: { user: named }, query }).catch((error) => {
          throw toCliError(error, hints);
        });
        const fate = o.transferTo ? `, their memberships moved to ${o.transferTo}` : '';
        ctx.out.result({ user: named, deleted: true, ...query }, `deleted user ${named}${fate}`);
      }),
    ['nodereg user delete bob --transfer-to alice', 'nodereg user delete bob@example.com --remove-memberships'],
  );
}
