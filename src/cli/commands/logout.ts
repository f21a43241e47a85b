import type { Command } from 'commander';
import type { Ctx } from '../context.js';
import { examples } from '../examples.js';

export function register(program: Command, ctx: Ctx): void {
  examples(
    program
      .command('logout')
      .description(
        "forget the profile's saved token (the token itself stays valid: revoke it with `nodereg token revoke`)",
      )
      .action(async () => {
        const profile = ctx.globals().profile ?? ctx.env.NODEREG_PROFILE ?? 'default';
        const store = await ctx.config();
        const had = Boolean(store.profile(profile).token);
        if (had) store.setProfile(profile, { token: undefined });
        ctx.out.result(
          { profile, removed: had },
          had ? `removed the token of profile ${profile}` : `profile ${profile} has no saved token`,
        );
        if (ctx.env.NODEREG_TOKEN && !ctx.out.json)
          ctx.out.warn('NODEREG_TOKEN is set in the environment and is still used');
      }),
    ['nodereg logout', 'nodereg logout --profile work'],
  );
}
