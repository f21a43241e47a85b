import type { Command } from 'commander';
import type { Publisher } from '../../contract/resources.js';
import type { Ctx } from '../context.js';
import { invalidInput, toCliError } from '../errors.js';
import { fields, statusText } from '../format.js';
import { relativeTime } from '../output.js';
import { checkPublisherId, given, manifestPublisher, precheck, textOption } from '../resolve.js';
import { examples } from '../examples.js';
import { routes } from '../../client/routes.js';
import { registerInvitations } from './publisher/invitations.js';
import { registerList } from './publisher/list.js';
import { membersTable } from './publisher/members.js';
import { registerMembers } from './publisher/members.js';
import { registerTrustCommands } from './publisher/trust.js';
import { registerWebhookCommands } from './publisher/webhook.js';

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

// --name is optional (the id names it until then): the hint runs as printed.
const createHint = (id: string) => `create it with \`nodereg publisher create ${id}\` (--name sets its display name)`;

export function register(program: Command, ctx: Ctx): void {
  const publisher = examples(
    program.command('publisher').description('create, show and update publishers, and manage their members'),
    [
      'nodereg publisher create acme --name "Acme Nodes"',
      'nodereg publisher list',
      'nodereg publisher members add acme alice@example.org --role owner',
      'nodereg publisher invitations',
      'nodereg publisher accept acme',
    ],
  );

  registerCreate(publisher, ctx);

  examples(
    publisher
      .command('show <id>')
      .description('show a publisher and its members')
      .action(async (id: string) => {
        await checkPublisherId(id, '<id>');
        const found = await (await ctx.client())
          .call(routes.getPublisher, { params: { publisherId: id } })
          .catch((error) => {
            throw toCliError(error, { 404: createHint(id) });
          });
        ctx.out.result(found, () => describePublisher(ctx, found));
      }),
    ['nodereg publisher show acme', 'nodereg publisher show acme --json'],
  );

  registerUpdate(publisher, ctx);

  registerMembers(publisher, ctx);
  registerInvitations(publisher, ctx);
  registerList(publisher, ctx);
  registerTrustCommands(publisher, ctx);
  registerWebhookCommands(publisher, ctx);
}

function registerCreate(publisher: Command, ctx: Ctx): void {
  examples(
    withProfileOptions(
      publisher
        .command('create <id>')
        .description('create a publisher; you become its owner')
        .option('--name <text>', 'display name'),
    ).action(async (id: string, o: ProfileOptions) => {
      const body = { id, ...profileFields(o), name: o.name };
      const checked = await precheck(routes.createPublisher, { body }, { id: '<id>' });
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
}

function registerUpdate(publisher: Command, ctx: Ctx): void {
  examples(
    withProfileOptions(
      publisher
        .command('update <id>')
        .description(
          "update a publisher's profile (owner only): only the fields given change; an empty value clears a field",
        )
        .option('--name <text>', 'display name'),
    ).action(async (id: string, o: ProfileOptions) => {
      await checkPublisherId(id, '<id>');
      const body = profileFields(o);
      if (Object.keys(body).length === 0) {
        throw invalidInput(
          'nothing to update',
          `pass at least one field, e.g. nodereg publisher update ${id} --website https://...`,
        );
      }
      const checked = await precheck(routes.updatePublisher, { body });
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
  return `${[title, body].filter(Boolean).join('\n')}\n\n${membersTable(p)}`;
}
