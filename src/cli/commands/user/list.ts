// `nodereg user list`: the registry's users (admins only), every page or one.
import type { Command } from 'commander';
import { routes } from '../../../client/routes.js';
import { PAGE } from '../../../contract/limits.js';
import type { User } from '../../../contract/resources.js';
import type { Ctx } from '../../context.js';
import { toCliError } from '../../errors.js';
import { examples } from '../../examples.js';
import { relativeTime, table } from '../../output.js';
import { allPages } from '../../pages.js';
import { precheck } from '../../resolve.js';

export const ADMIN_HINT = 'managing users takes an admin token (`nodereg whoami` shows whether yours is one)';

const userLine = (u: User) => [
  u.id,
  u.name,
  u.email ?? '',
  [u.admin ? 'admin' : '', u.disabled ? 'disabled' : ''].filter(Boolean).join(', ') || '-',
  u.created_at ? relativeTime(u.created_at) : '',
];

export function registerUserList(user: Command, ctx: Ctx): void {
  examples(
    user
      .command('list')
      .description('list the users (admins only): id, name, e-mail, admin or disabled; every page unless --page')
      .option('--page <n>', 'only this page')
      .option('--limit <n>', `users a page (${PAGE.limitMin}-${PAGE.limitMax})`, String(PAGE.limitMax))
      .action(async (o: { page?: string; limit: string }) => {
        const { query } = await precheck(routes.listUsers, { query: { page: o.page ?? '1', limit: o.limit } });
        const client = await ctx.client({ requireToken: true });
        const read = (page: number) =>
          client.call(routes.listUsers, { query: { ...query, page: String(page) } }).catch((error) => {
            throw toCliError(error, { 403: ADMIN_HINT });
          });
        const users =
          o.page === undefined
            ? await allPages(async (page) => {
                const answer = await read(page);
                return { items: answer.users, last: page >= answer.totalPages };
              })
            : (await read(Number(query?.page))).users;
        ctx.out.result(users, () =>
          users.length ? table(users.map(userLine), ['ID', 'NAME', 'E-MAIL', 'STATE', 'CREATED']) : 'no users',
        );
      }),
    ['nodereg user list', 'nodereg user list --page 2 --limit 50', 'nodereg user list --json'],
  );
}
