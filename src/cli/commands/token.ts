import { Option, type Command } from 'commander';
import { TOKEN_PREFIX, TOKEN_SHOWN_PREFIX } from '../../contract/limits.js';
import type { Ctx } from '../context.js';
import { invalidInput, toCliError } from '../errors.js';
import { relativeTime, table } from '../output.js';
import { checkPublisherId, precheck } from '../resolve.js';
import { examples } from '../examples.js';
import { routes } from '../../client/routes.js';
import { listWhose, registerRevoke, whoseHints, type Whose } from './token/revoke.js';

/**
 * `--publisher ID` or `--user`; the two conflict (commander refuses both). Where `anyUser`, `--user USER`
 * names another user (by id, e-mail or name), whose tokens an admin manages.
 */
function whoseOptions(command: Command, userHelp: string, anyUser = false): Command {
  return command
    .addOption(
      new Option('--publisher <id>', 'a personal access token of this publisher (owner only)').conflicts('user'),
    )
    .option(anyUser ? '--user [user]' : '--user', userHelp);
}

export function register(program: Command, ctx: Ctx): void {
  const token = examples(program.command('token').description('create, list and revoke access tokens'), [
    'nodereg token create --publisher acme --name ci',
    'nodereg token list --publisher acme',
  ]);

  examples(
    whoseOptions(token.command('create'), 'a user token of your own')
      .description(
        'create a token and print it once on stdout (publisher access token with --publisher, user token with --user)',
      )
      .option('--name <text>', 'a name to recognise the token by', 'token')
      .action(async (o: Whose & { name: string }) => {
        if (!o.publisher && !o.user)
          throw invalidInput(
            'say whose token to create',
            'pass --publisher <id> (an access token for publishing) or --user (a user token)',
          );
        if (o.publisher) await checkPublisherId(o.publisher, '--publisher');
        const { body } = await precheck(routes.createUserToken, { body: { name: o.name } });
        const client = await ctx.client({ requireToken: true });
        const created = await (o.publisher
          ? client.call(routes.createPublisherToken, { params: { publisherId: o.publisher }, body })
          : client.call(routes.createUserToken, { body })
        ).catch((error) => {
          throw toCliError(error, whoseHints({ publisher: o.publisher }));
        });
        // stdout carries the token alone, so `TOKEN=$(nodereg token create ...)` works
        ctx.out.result(created, created.token);
        if (!ctx.out.json) {
          ctx.out.success(
            `created ${o.publisher ? `access token of ${o.publisher}` : 'user token'} "${created.name}" (${created.id})`,
          );
          ctx.out.hint(
            'it is shown only this once: store it as NODEREG_TOKEN (e.g. a CI secret) or save it with `nodereg login`',
          );
        }
      }),
    [
      'nodereg token create --publisher acme --name ci',
      'nodereg token create --user --name laptop',
      'TOKEN=$(nodereg token create --publisher acme --name ci)',
    ],
  );

  examples(
    whoseOptions(
      token.command('list'),
      "your own user tokens (the default); --user USER: that user's tokens, the access tokens they made included (admins)",
      true,
    )
      .description('list tokens (never their secret): prefix, name, when created and last used')
      .action(async (o: Whose) => {
        if (o.publisher) await checkPublisherId(o.publisher, '--publisher');
        const client = await ctx.client({ requireToken: true });
        const tokens = await listWhose(client, o).catch((error) => {
          throw toCliError(error, whoseHints(o));
        });
        ctx.out.result(tokens, () =>
          tokens.length
            ? table(
                tokens.map((t) => [
                  t.id,
                  `${t.prefix}…`,
                  t.name,
                  relativeTime(t.created_at),
                  t.last_used_at ? relativeTime(t.last_used_at) : 'never',
                  ...(t.kind ? [t.publisher_id ?? '(user token)'] : []),
                ]),
                ['ID', 'PREFIX', 'NAME', 'CREATED', 'LAST USED', ...(typeof o.user === 'string' ? ['PUBLISHER'] : [])],
              )
            : 'no tokens',
        );
      }),
    ['nodereg token list', 'nodereg token list --publisher acme', 'nodereg token list --user alice@example.com'],
  );

  registerRevoke(token, ctx, {
    whose: (command) =>
      whoseOptions(
        command,
        "one of your own user tokens (the default); --user USER: one of that user's tokens (admins)",
        true,
      ),
  });
}
