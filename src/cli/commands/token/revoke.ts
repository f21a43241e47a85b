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
  user?: boolean;
}

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
  ownerHints: (publisher?: string) => Partial<Record<number, string>>;
}

export function registerRevoke(token: Command, ctx: Ctx, { whose, ownerHints }: RevokeParts): void {
  examples(
    whose(token.command('revoke <token>'))
      .description(
        'revoke a token, named by its id, its prefix or its name as `token list` shows them, or by the token itself: it stops working at once',
      )
      .action(async (named: string, o: Whose) => {
        if (o.publisher) checkPublisherId(o.publisher, '--publisher');
        const listing = `nodereg token list${o.publisher ? ` --publisher ${o.publisher}` : ''}`;
        const client = await ctx.client({ requireToken: true });
        const tokens = await (o.publisher
          ? client.call(routes.listPublisherTokens, { params: { publisherId: o.publisher } })
          : client.call(routes.listUserTokens)
        ).catch((error) => {
          throw toCliError(error, ownerHints(o.publisher));
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
              ? `name it by its id: \`${listing}\` lists them`
              : `\`${listing}\` lists the tokens by id, prefix and name`,
          );
        const [target] = found;
        await (o.publisher
          ? client.call(routes.deletePublisherToken, { params: { publisherId: o.publisher, tokenId: target.id } })
          : client.call(routes.deleteUserToken, { params: { tokenId: target.id } })
        ).catch((error) => {
          throw toCliError(error, { ...ownerHints(o.publisher), 404: `no such token: \`${listing}\` lists them` });
        });
        ctx.out.result(
          { id: target.id, name: target.name, revoked: true, ...(o.publisher ? { publisher_id: o.publisher } : {}) },
          `revoked token ${target.name} (${target.prefix}…, ${target.id})`,
        );
      }),
    [
      'nodereg token revoke ci --publisher acme   # by name',
      'nodereg token revoke nrg_pat_3f6c…          # by the prefix `token list` shows',
      'nodereg token revoke 9b1d4e27-5c3a-4f86-a0e2-7d9c1b3f5e68',
    ],
  );
}
