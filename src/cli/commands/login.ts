import type { Command } from 'commander';
import type { Me } from '../../contract/resources.js';
import type { Ctx } from '../context.js';
import { invalidInput, toCliError } from '../errors.js';
import { describeMe } from '../format.js';
import { examples } from '../examples.js';
import { routes } from '../../client/routes.js';

export function register(program: Command, ctx: Ctx): void {
  examples(
    program
      .command('login')
      .description(
        'save a token for a registry into a profile, after checking it with the registry (uses the global --registry, --profile and --token)',
      )
      .action(async () => {
        const connection = await ctx.connection();
        const token = await askToken(ctx, connection.registry);
        const client = await ctx.client({ token });
        // verified before anything is saved: a bad token leaves the config as it was
        const me: Me = await client.call(routes.getMe, {}, { exact: true }).catch((error) => {
          throw toCliError(error, {
            401: `the registry refused this token; nothing was saved. Check that it is whole and made by this registry (${connection.registry}); a new one is made by its admin, or by you with a token it accepts`,
          });
        });
        const store = await ctx.config();
        store.setProfile(connection.profile, { registry: connection.registry, token });
        ctx.out.result(
          { profile: connection.profile, registry: connection.registry, config: store.path, me },
          `logged in to ${connection.registry} as ${describeMe(me)} (profile ${connection.profile})`,
        );
      }),
    [
      'nodereg login                                   # asks for the token (hidden)',
      'nodereg login --registry https://registry.example --profile work',
      'echo "$NODEREG_TOKEN" | nodereg login --no-input',
    ],
  );
}

/** --token, else a hidden prompt on a terminal, else stdin. */
async function askToken(ctx: Ctx, registry: string): Promise<string> {
  const flag = ctx.globals().token;
  if (flag !== undefined) {
    if (!flag.trim()) throw invalidInput('--token is empty');
    return flag.trim();
  }
  if (ctx.interactive()) {
    const { password } = await ctx.prompts();
    const answer = await password({
      message: `Token for ${registry}`,
      validate: (value: string) => (value.trim() ? true : 'paste a token (nrg_u_… or nrg_pat_…)'),
    });
    return answer.trim();
  }
  const piped = (await ctx.readStdin()).trim();
  if (!piped) {
    throw invalidInput(
      'no token given: not a terminal, so nothing can be asked',
      'pass --token <token>, or pipe it on stdin: echo "$TOKEN" | nodereg login',
    );
  }
  return piped;
}
