import type { Ctx } from '../../context.js';
import { invalidInput } from '../../errors.js';

/** How init gets a value no flag gave: a prompt on a terminal, else a refusal naming the flag. */
export interface Asker {
  interactive: boolean;
  ask(
    question: string,
    validate: (v: string) => string | undefined,
    fallback?: string,
    optional?: boolean,
  ): Promise<string>;
  needFlag(flag: string, why: string): never;
}

export async function makeAsker(ctx: Ctx): Promise<Asker> {
  const interactive = ctx.interactive();
  const prompts = interactive ? await ctx.prompts() : undefined;
  return {
    interactive,
    async ask(question, validate, fallback, optional = false) {
      const answer = await prompts!.input({
        message: question,
        default: fallback,
        validate: (v: string) => (optional && v.trim() === '') || (validate(v.trim()) ?? true),
      });
      return answer.trim();
    },
    needFlag(flag, why) {
      throw invalidInput(
        `missing ${flag}: ${why}, and init cannot ask here (no terminal, CI is set, or --no-input)`,
        `nodereg init ${flag} <value>`,
      );
    },
  };
}
