// `nodereg publisher members add|remove|list`: a publisher's members, named by id, e-mail or user name.
import { Option, type Command } from 'commander';
import { MEMBER_ROLES } from '../../../contract/limits.js';
import type { Publisher } from '../../../contract/resources.js';
import { routes } from '../../../client/routes.js';
import type { Ctx } from '../../context.js';
import { toCliError } from '../../errors.js';
import { examples } from '../../examples.js';
import { table } from '../../output.js';
import { checkPublisherId, precheck } from '../../resolve.js';

/** "an owner", "a member": how a role reads after "is now". */
export const asRole = (role: string) => `${/^[aeiou]/.test(role) ? 'an' : 'a'} ${role}`;

/** The members of a publisher as a table: id, name, e-mail, role. */
export function membersTable(p: Publisher): string {
  const rows = (p.members ?? []).map((m) => [m.user?.id ?? '', m.user?.name ?? '', m.user?.email ?? '', m.role]);
  return rows.length ? table(rows, ['USER', 'NAME', 'EMAIL', 'ROLE']) : 'no members listed';
}

export function registerMembers(publisher: Command, ctx: Ctx): void {
  const members = examples(
    publisher.command('members').description("list, invite or remove a publisher's members (owner only)"),
    [
      'nodereg publisher members list acme',
      'nodereg publisher members add acme alice@example.org',
      'nodereg publisher members remove acme alice',
    ],
  );
  registerAdd(members, ctx);
  registerRemove(members, ctx);
  examples(
    members
      .command('list <id>')
      .description('list the members of a publisher')
      .action(async (id: string) => {
        await checkPublisherId(id, '<id>');
        const found = await (await ctx.client())
          .call(routes.getPublisher, { params: { publisherId: id } })
          .catch((error) => {
            throw toCliError(error, { 404: `there is no publisher ${id}: \`nodereg publisher list\` lists yours` });
          });
        ctx.out.result(found.members ?? [], () => membersTable(found));
      }),
    ['nodereg publisher members list acme', 'nodereg publisher members list acme --json'],
  );
}

function registerAdd(members: Command, ctx: Ctx): void {
  examples(
    members
      .command('add <id> <user>')
      .description(
        "invite a user (their id, e-mail or user name) to a publisher; they join once they accept. A member's role changes at once",
      )
      .addOption(new Option('--role <role>', 'role').choices(MEMBER_ROLES).default('member'))
      .action(async (id: string, user: string, o: { role: (typeof MEMBER_ROLES)[number] }) => {
        await checkPublisherId(id, '<id>');
        const body = { user, role: o.role };
        const checked = await precheck(routes.addPublisherMember, { body }, { user: '<user>' });
        const client = await ctx.client({ requireToken: true });
        const invitation = await client
          .call(routes.addPublisherMember, { params: { publisherId: id }, body: checked.body })
          .catch((error) => {
            throw toCliError(error, {
              404: `check the publisher (\`nodereg publisher show ${id}\`) and the user: give their id, e-mail or user name`,
              409: 'name the user by their id or e-mail',
              403: `only an owner of ${id} may add members`,
            });
          });
        // An address's invitation names no one: whether it has an account is not told.
        if (!invitation.user) {
          ctx.out.result(invitation, `invited ${user} to ${id} as ${invitation.role}`);
          if (!ctx.out.json)
            ctx.out.hint(
              `a user with that address sees it in \`nodereg publisher invitations\` and joins with \`nodereg publisher accept ${id}\``,
            );
          return;
        }
        const who = `${invitation.user.name} (${invitation.user.id})`;
        if (invitation.status === 'member') {
          ctx.out.result(invitation, `${who} is now ${asRole(invitation.role)} of ${id}`);
          return;
        }
        ctx.out.result(invitation, `invited ${who} to ${id} as ${invitation.role}`);
        if (!ctx.out.json) ctx.out.hint(`they join once they run \`nodereg publisher accept ${id}\``);
      }),
    ['nodereg publisher members add acme alice', 'nodereg publisher members add acme alice@example.org --role owner'],
  );
}

function registerRemove(members: Command, ctx: Ctx): void {
  examples(
    members
      .command('remove <id> <user>')
      .description(
        'remove a member (their id, e-mail or user name) from a publisher, revoking the publisher tokens they created, or withdraw an invitation (never the last owner)',
      )
      .action(async (id: string, user: string) => {
        await checkPublisherId(id, '<id>');
        await precheck(
          routes.removePublisherMember,
          { params: { publisherId: id, userId: user } },
          { userId: '<user>' },
        );
        const client = await ctx.client({ requireToken: true });
        const me = await client.call(routes.getMe, {}).catch(() => undefined);
        const self = me?.user as { id: string; name: string; email?: string | null } | undefined;
        await client
          .call(routes.removePublisherMember, { params: { publisherId: id, userId: user } })
          .catch((error) => {
            throw toCliError(error, {
              404: `${user} is neither a member of ${id} nor invited (\`nodereg publisher members list ${id}\` lists the members)`,
              409: 'a publisher keeps at least one owner: add another owner first',
              403: `only an owner of ${id} may remove members`,
            });
          });
        ctx.out.result({ publisher_id: id, user_id: user, removed: true }, `removed ${user} from ${id}`);
        if (self && [self.id, self.name, self.email].includes(user)) {
          // Removing oneself also revokes the publisher tokens one made: a CI job using one stops working.
          // Said once it is done: a refused removal (the last owner) revokes nothing.
          ctx.out.warn(
            `you removed yourself from ${id}: the ${id} tokens you created are revoked with your membership, and CI jobs that use them will fail`,
          );
        }
      }),
    ['nodereg publisher members remove acme alice', 'nodereg publisher members remove acme alice@example.org'],
  );
}
