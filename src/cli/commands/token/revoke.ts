// `nodereg token revoke`: a token named by its id, its displayed prefix, its name, or the token itself.
// The token is found in the list of tokens here, so a pasted secret never travels in a URL.
import type { Command } from 'commander';
import { routes } from '../../../client/routes.js';
import type { Ctx } from '../../context.js';
import { CliError, EXIT, toCliError } from '../../errors.js';
import { examples } from '../../examples.js';
import { checkPublisherId } from '../../resolve.js';

export interface Whose {
  publisher?: string;
  /** true: one's own; a string: that user's (an admin's view). */
  user?: boolean | string;
}

type Client = Awaited<ReturnType<Ctx['client']>>;

/** The tokens `o` names: a publisher's, another user's (admins), or one's own. */
export function listWhose(client: Client, o: Whose) {
  if (o.publisher) return client.call(routes.listPublisherTokens, { params: { publisherId: o.publisher } });
  if (typeof o.user === 'string') return client.call(routes.listTokensOfUser, { params: { user: o.user } });
  return client.call(routes.listUserTokens);
}

function revokeWhose(client: Client, o: Whose, tokenId: string) {
  if (o.publisher) return client.call(routes.deletePublisherToken, { params: { publisherId: o.publisher, tokenId } });
  if (typeof o.user === 'string') return client.call(routes.revokeTokenOfUser, { params: { user: o.user, tokenId } });
  return client.call(routes.deleteUserToken, { params: { tokenId } });
}

/** What to do about a refusal of the tokens of `o`. */
export function whoseHints(o: Whose): Partial<Record<number, string>> {
  if (o.publisher)
    return {
      403: `only an owner of ${o.publisher} manages its tokens (\`nodereg whoami\` shows your roles)`,
      404: `no publisher ${o.publisher}: create it with \`nodereg publisher create ${o.publisher}\``,
    };
  if (typeof o.user === 'string')
    return {
      403: "managing another user's tokens takes an admin token (`nodereg whoami` shows whether yours is one)",
      404: '`nodereg user list` lists the users by id, name and e-mail',
    };
  return {};
}

const listing = (o: Whose) =>
  `nodereg token list${o.publisher ? ` --publisher ${o.publisher}` : typeof o.user === 'string' ? ` --user ${o.user}` : ''}`;

/** A token as `token list` shows it. */
interface TokenInfo {
  id: string;
  name: string;
  prefix: string;
}

/** The tokens `named` names: the one with that id, else those whose prefix it is or starts with, else by name. */
export function tokensNamed(tokens: readonly TokenInfo[], named: string): TokenInfo[] {
  const byId = tokens.filter((t) => t.id === named);
  if (byId.length) return byId;
  const typed = named.replace(/…$|\.\.\.$/, '');
  const byPrefix = tokens.filter((t) => typed.length >= t.prefix.length && typed.startsWith(t.prefix));
  if (byPrefix.length) return byPrefix;
  return tokens.filter((t) => t.name === named);
}

interface RevokeParts {
  /** Adds --publisher and --user. */
  whose: (command: Command) => Command;
}

export function registerRevoke(token: Command, ctx: Ctx, { whose }: RevokeParts): void {
  examples(
    whose(token.command('revoke <token>'))
      .description(
        'revoke a token, named by its id, its prefix or its name as `token list` shows them, or by the token itself: it stops working at once',
      )
      .action(async (named: string, o: Whose) => {
        if (o.publisher) await checkPublisherId(o.publisher, '--publisher');
        const client = await ctx.client({ requireToken: true });
        const tokens = await listWhose(client, o).catch((error) => {
          throw toCliError(error, whoseHints(o));
        });
        const found = tokensNamed(tokens, named);
        // A pasted token is never echoed: only the prefix the list shows.
        const shown = tokens.some((t) => named.startsWith(t.prefix)) || named.length > 40 ? 'that token' : named;
        if (found.length !== 1)
          throw new CliError(
            found.length ? `${found.length} tokens answer to ${shown}` : `no token answers to ${shown}`,
            found.length ? EXIT.invalid : EXIT.notFound,
            found.length ? 'invalid_input' : 'not_found',
            found.length
              ? `name it by its id: \`${listing(o)}\` lists them`
              : `\`${listing(o)}\` lists the tokens by id, prefix and name`,
          );
        const [target] = found;
        await revokeWhose(client, o, target.id).catch((error) => {
          throw toCliError(error, { ...whoseHints(o), 404: `no such token: \`${listing(o)}\` lists them` });
        });
        ctx.out.result(
          {
            id: target.id,
            name: target.name,
            revoked: true,
            ...(o.publisher ? { publisher_id: o.publisher } : {}),
            ...(typeof o.user === 'string' ? { user: o.user } : {}),
          },
          `revoked token ${target.name} (${target.prefix}…, ${target.id})`,
        );
      }),
    [
      'nodereg token revoke ci --publisher acme   # by name',
      'nodereg token revoke nrg_pat_3f6c…          # by the prefix `token list` shows',
      'nodereg token revoke 9b1d4e27-5c3a-4f86-a0e2-7d9c1b3f5e68',
      'nodereg token revoke laptop --user alice@example.com   # an admin, for another user',
    ],
  );
}
