// `nodereg publisher invitations|accept|decline`: one's own invitations to join publishers.
import type { Command } from 'commander';
import { routes } from '../../../client/routes.js';
import type { Ctx } from '../../context.js';
import { toCliError } from '../../errors.js';
import { examples } from '../../examples.js';
import { relativeTime, table } from '../../output.js';
import { checkPublisherId } from '../../resolve.js';
import { asRole } from './members.js';

const NO_INVITATION = 'you have no invitation to this publisher (`nodereg publisher invitations` lists yours)';

export function registerInvitations(publisher: Command, ctx: Ctx): void {
  examples(
    publisher
      .command('invitations')
      .description('list your invitations to join publishers')
      .action(async () => {
        const client = await ctx.client({ requireToken: true });
        const invitations = await client.call(routes.listMyInvitations, {});
        ctx.out.result(invitations, () =>
          invitations.length
            ? table(
                invitations.map((i) => [
                  i.publisher.id,
                  i.publisher.name ?? '',
                  i.role,
                  i.invited_by?.name ?? '',
                  relativeTime(i.created_at),
                ]),
                ['PUBLISHER', 'NAME', 'ROLE', 'INVITED BY', 'WHEN'],
              )
            : 'no invitations',
        );
        if (!ctx.out.json && invitations.length)
          ctx.out.hint(`accept one with \`nodereg publisher accept ${invitations[0].publisher.id}\``);
      }),
    ['nodereg publisher invitations', 'nodereg publisher invitations --json'],
  );

  examples(
    publisher
      .command('accept <id>')
      .description('accept your invitation to a publisher: you become a member')
      .action(async (id: string) => {
        await checkPublisherId(id, '<id>');
        const client = await ctx.client({ requireToken: true });
        const member = await client.call(routes.acceptInvitation, { params: { publisherId: id } }).catch((error) => {
          throw toCliError(error, { 404: NO_INVITATION });
        });
        ctx.out.result(member, `you are now ${asRole(member.role)} of ${id}`);
      }),
    ['nodereg publisher accept acme'],
  );

  examples(
    publisher
      .command('decline <id>')
      .description('decline your invitation to a publisher')
      .action(async (id: string) => {
        await checkPublisherId(id, '<id>');
        const client = await ctx.client({ requireToken: true });
        await client.call(routes.declineInvitation, { params: { publisherId: id } }).catch((error) => {
          throw toCliError(error, { 404: NO_INVITATION });
        });
        ctx.out.result({ publisher_id: id, declined: true }, `declined the invitation to ${id}`);
      }),
    ['nodereg publisher decline acme'],
  );
}
