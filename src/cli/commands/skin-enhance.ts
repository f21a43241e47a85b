import { Option, type Command } from 'commander';
import { PERCENT, SKIN_ENHANCER } from '../../contract/limits.js';
import {
  addWaitOptions,
  defined,
  finishTask,
  mediaArgument,
  toNumber,
  validateBody,
  waitPlan,
  type WaitOptions,
} from '../ai-tasks.js';
import type { Ctx } from '../context.js';
import { examples } from '../examples.js';
import { routes } from '../../client/routes.js';

interface SkinOptions extends WaitOptions {
  optimizedFor?: string;
  sharpen?: string;
  smartGrain?: string;
  webhookUrl?: string;
}

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('skin-enhance <image>')
    .description(
      "enhance the skin in an image (a local file, sent as base64, or an http(s) URL) through the registry's AI proxy",
    )
    .addOption(
      new Option(
        '--optimized-for <goal>',
        `what to optimise for (default ${SKIN_ENHANCER.defaultOptimizedFor})`,
      ).choices(SKIN_ENHANCER.optimizedFor),
    )
    .option(
      '--sharpen <n>',
      `sharpening intensity, ${PERCENT.min}–${PERCENT.max} (default ${SKIN_ENHANCER.sharpen.default})`,
    )
    .option(
      '--smart-grain <n>',
      `smart grain intensity, ${PERCENT.min}–${PERCENT.max} (default ${SKIN_ENHANCER.smartGrain.default})`,
    )
    .option('--webhook-url <url>', 'the registry POSTs each status change of the task there (signed)');
  addWaitOptions(command).action(async (image: string, options: SkinOptions) => {
    const plan = waitPlan(options, ctx.out.json);
    const body = defined({
      image: await mediaArgument(image, '<image>'),
      optimized_for: options.optimizedFor,
      sharpen: toNumber(options.sharpen),
      smart_grain: toNumber(options.smartGrain),
      webhook_url: options.webhookUrl,
    });
    const checked = await validateBody(routes.skinEnhance, body, { image: '<image>' });
    const client = await ctx.client({ requireToken: true });
    const answer = await client.call(routes.skinEnhance, { body: checked }, { timeoutMs: plan.timeoutMs });
    await finishTask(ctx, client, 'skin-enhancer', answer, plan, true);
  });
  examples(command, [
    'nodereg skin-enhance portrait.jpg --output enhanced.png',
    'nodereg skin-enhance https://example.com/portrait.jpg --optimized-for no_make_up --sharpen 20 --wait',
  ]);
}
