import { Option, type Command } from 'commander';
import { MEMBER_ROLES } from '../../contract/limits.js';
import {
  acceptInvitation,
  addPublisherMember,
  createPublisher,
  declineInvitation,
  getPublisher,
  listMyInvitations,
  removePublisherMember,
  updatePublisher,
} from '../../contract/registry.js';
import type { Publisher } from '../../contract/resources.js';
import type { Ctx } from '../context.js';
import { invalidInput, toCliError } from '../errors.js';
import { fields, statusText } from '../format.js';
import { relativeTime, table } from '../output.js';
import { checkPublisherId, given, manifestPublisher, precheck, textOption } from '../resolve.js';
import { examples } from '../examples.js';
import { routes } from '../../client/routes.js';
import { registerTrustCommands } from './publisher-trust.js';

interface ProfileOptions {
  name?: string;
  description?: string;
  website?: string;
  support?: string;
  sourceCodeRepo?: string;
  logo?: string;
}

/** The publisher fields a user may set, from the flags given (an empty value clears one). */
function profileFields(o: ProfileOptions) {
  return given({
    name: textOption(o.name),
    description: textOption(o.description),
    website: textOption(o.website),
    support: textOption(o.support),
    source_code_repo: textOption(o.sourceCodeRepo),
    logo: textOption(o.logo),
  });
}

function withProfileOptions(command: Command): Command {
  return command
    .option('--description <text>', 'description')
    .option('--website <url>', 'website')
    .option('--support <url-or-email>', 'where users get support')
    .option('--source-code-repo <url>', 'source code repository')
    .option('--logo <url>', 'logo URL');
}

const createHint = (id: string) => `create it with \`nodereg publisher create ${id} --name "..."\``;

export function register(program: Command, ctx: Ctx): void {
  const publisher = examples(
    program.command('publisher').description('create, show and update publishers, and manage their members'),
    [
      'nodereg publisher create acme --name "Acme Nodes"',
      'nodereg publisher members add acme alice@example.org --role owner',
      'nodereg publisher invitations',
      'nodereg publisher accept acme',
    ],
  );

  examples(
    withProfileOptions(
      publisher
        .command('create <id>')
        .description('create a publisher; you become its owner')
        .option('--name <text>', 'display name'),
    ).action(async (id: string, o: ProfileOptions) => {
      const body = { id, ...profileFields(o), name: o.name };
      const checked = precheck(createPublisher, { body }, { id: '<id>' });
      const client = await ctx.client({ requireToken: true });
      const created = await client.call(routes.createPublisher, checked).catch((error) => {
        throw toCliError(error, {
          409: `the id ${id} is taken: choose another, or see it with \`nodereg publisher show ${id}\``,
        });
      });
      ctx.out.result(created, `created publisher ${created.id}${created.name ? ` (${created.name})` : ''}`);
      if (!ctx.out.json) {
        // A pyproject.toml that names it already ([tool.comfy] PublisherId of the incumbent's too) needs no edit.
        const named = (await manifestPublisher().catch(() => undefined)) === created.id;
        ctx.out.hint(
          named
            ? 'publish with `nodereg publish` (pyproject.toml names this publisher)'
            : `publish with \`nodereg publish --publisher ${created.id}\`, or set [tool.nodereg] publisher = "${created.id}" in pyproject.toml`,
        );
      }
    }),
    [
      'nodereg publisher create acme --name "Acme Nodes"',
      'nodereg publisher create acme --name Acme --website https://acme.example',
    ],
  );

  examples(
    publisher
      .command('show <id>')
      .description('show a publisher and its members')
      .action(async (id: string) => {
        checkPublisherId(id, '<id>');
        const found = await (await ctx.client())
          .call(routes.getPublisher, { params: { publisherId: id } })
          .catch((error) => {
            throw toCliError(error, { 404: createHint(id) });
          });
        ctx.out.result(found, () => describePublisher(ctx, found));
      }),
    ['nodereg publisher show acme', 'nodereg publisher show acme --json'],
  );

  examples(
    withProfileOptions(
      publisher
        .command('update <id>')
        .description(
          "update a publisher's profile (owner only): only the fields given change; an empty value clears a field",
        )
        .option('--name <text>', 'display name'),
    ).action(async (id: string, o: ProfileOptions) => {
      checkPublisherId(id, '<id>');
      const body = profileFields(o);
      if (Object.keys(body).length === 0) {
        throw invalidInput(
          'nothing to update',
          `pass at least one field, e.g. nodereg publisher update ${id} --website https://...`,
        );
      }
      const checked = precheck(updatePublisher, { body });
      const client = await ctx.client({ requireToken: true });
      const updated = await client
        .call(routes.updatePublisher, { params: { publisherId: id }, body: checked.body })
        .catch((error) => {
          throw toCliError(error, {
            404: createHint(id),
            403: `only an owner of ${id} may update it (\`nodereg whoami\` shows your roles)`,
          });
        });
      ctx.out.result(updated, `updated publisher ${updated.id}: ${Object.keys(body).join(', ')}`);
    }),
    [
      'nodereg publisher update acme --description "Image nodes" --support support@acme.example',
      'nodereg publisher update acme --logo ""   # clears the logo',
    ],
  );

  const members = examples(
    publisher.command('members').description("invite or remove a publisher's members (owner only)"),
    [
      'nodereg publisher members add acme alice@example.org',
      'nodereg publisher members remove acme 5b0e6c1e-8f3a-4a52-9d1c-2f4b7c9e0a11',
    ],
  );

  examples(
    members
      .command('add <id> <user>')
      .description(
        "invite a user (their id, e-mail or user name) to a publisher; they join once they accept. A member's role changes at once",
      )
      .addOption(new Option('--role <role>', 'role').choices(MEMBER_ROLES).default('member'))
      .action(async (id: string, user: string, o: { role: (typeof MEMBER_ROLES)[number] }) => {
        checkPublisherId(id, '<id>');
        const body = { user, role: o.role };
        const checked = precheck(addPublisherMember, { body }, { user: '<user>' });
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
        const who = `${invitation.user.name} (${invitation.user.id})`;
        if (invitation.status === 'member') {
          ctx.out.result(invitation, `${who} is now ${invitation.role} of ${id}`);
          return;
        }
        ctx.out.result(invitation, `invited ${who} to ${id} as ${invitation.role}`);
        if (!ctx.out.json) ctx.out.hint(`they join once they run \`nodereg publisher accept ${id}\``);
      }),
    ['nodereg publisher members add acme alice', 'nodereg publisher members add acme alice@example.org --role owner'],
  );

  examples(
    members
      .command('remove <id> <userId>')
      .description(
        'remove a member from a publisher, revoking the publisher tokens they created, or withdraw an invitation (never the last owner)',
      )
      .action(async (id: string, userId: string) => {
        checkPublisherId(id, '<id>');
        precheck(removePublisherMember, { params: { publisherId: id, userId } }, { userId: '<userId>' });
        const client = await ctx.client({ requireToken: true });
        await client.call(routes.removePublisherMember, { params: { publisherId: id, userId } }).catch((error) => {
          throw toCliError(error, {
            404: `${userId} is neither a member of ${id} nor invited (\`nodereg publisher show ${id}\` lists members by id)`,
            409: 'a publisher keeps at least one owner: add another owner first',
            403: `only an owner of ${id} may remove members`,
          });
        });
        ctx.out.result({ publisher_id: id, user_id: userId, removed: true }, `removed ${userId} from ${id}`);
      }),
    ['nodereg publisher members remove acme 5b0e6c1e-8f3a-4a52-9d1c-2f4b7c9e0a11'],
  );

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
        checkPublisherId(id, '<id>');
        const client = await ctx.client({ requireToken: true });
        const member = await client.call(routes.acceptInvitation, { params: { publisherId: id } }).catch((error) => {
          throw toCliError(error, {
            404: 'you have no invitation to this publisher (`nodereg publisher invitations` lists yours)',
          });
        });
        ctx.out.result(member, `you are now ${member.role} of ${id}`);
      }),
    ['nodereg publisher accept acme'],
  );

  examples(
    publisher
      .command('decline <id>')
      .description('decline your invitation to a publisher')
      .action(async (id: string) => {
        checkPublisherId(id, '<id>');
        const client = await ctx.client({ requireToken: true });
        await client.call(routes.declineInvitation, { params: { publisherId: id } }).catch((error) => {
          throw toCliError(error, {
            404: 'you have no invitation to this publisher (`nodereg publisher invitations` lists yours)',
          });
        });
        ctx.out.result({ publisher_id: id, declined: true }, `declined the invitation to ${id}`);
      }),
    ['nodereg publisher decline acme'],
  );
  registerTrustCommands(publisher, ctx);
}

function describePublisher(ctx: Ctx, p: Publisher): string {
  const title = `${ctx.out.style('bold', p.name ? `${p.name} (${p.id})` : p.id)}  ${statusText(ctx.out, p.status)}`;
  const body = fields([
    ['description', p.description],
    ['website', p.website],
    ['support', p.support],
    ['source', p.source_code_repo],
    ['logo', p.logo],
    ['created', p.createdAt ? relativeTime(p.createdAt) : undefined],
  ]);
  const rows = (p.members ?? []).map((m) => [m.user?.id ?? '', m.user?.name ?? '', m.user?.email ?? '', m.role]);
  const memberText = rows.length ? table(rows, ['USER', 'NAME', 'EMAIL', 'ROLE']) : 'no members listed';
  return `${[title, body].filter(Boolean).join('\n')}\n\n${memberText}`;
}
