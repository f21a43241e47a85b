import { Option, type Command } from 'commander';
import { ADVANCED_SETTINGS, PERCENT, RELIGHT } from '../../contract/limits.js';
import {
  addWaitOptions,
  alias,
  defined,
  either,
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

interface RelightOptions extends WaitOptions {
  prompt?: string;
  lightTransferStrength?: string;
  style?: string;
  transferLightFromReferenceImage?: string;
  referenceImage?: string;
  transferLightFromLightmap?: string;
  lightmap?: string;
  changeBackground: boolean;
  interpolateFromOriginal?: boolean;
  preserveDetails: boolean;
  engine?: string;
  transferLightA?: string;
  transferLightB?: string;
  whites?: string;
  blacks?: string;
  brightness?: string;
  contrast?: string;
  saturation?: string;
  fixedGeneration?: boolean;
  webhookUrl?: string;
}

const level = (name: string) => `${name}, ${PERCENT.min}–${PERCENT.max} (default ${ADVANCED_SETTINGS.levels.default})`;

/** The relight command and its options, the proxy's relight fields as flags. */
function relightCommand(program: Command): Command {
  return program
    .command('relight <image>')
    .description("relight an image (a local file, sent as base64, or an http(s) URL) through the registry's AI proxy")
    .option(
      '--prompt <text>',
      `what the light should be like; weight a phrase with (phrase:${RELIGHT.promptWeight.min}–${RELIGHT.promptWeight.max})`,
    )
    .option(
      '--light-transfer-strength <n>',
      `${PERCENT.min} (closest to the original) – ${PERCENT.max} (default ${RELIGHT.lightTransferStrength.default})`,
    )
    .addOption(
      new Option('--style <style>', `look of the result (default ${RELIGHT.defaultStyle})`).choices(RELIGHT.styles),
    )
    .option(
      '--transfer-light-from-reference-image <image>',
      'take the light from this image (file or URL; alias --reference-image)',
    )
    .addOption(alias('--reference-image <image>'))
    .option(
      '--transfer-light-from-lightmap <image>',
      'take the light from this lightmap (file or URL; alias --lightmap)',
    )
    .addOption(alias('--lightmap <image>'))
    .option('--no-change-background', 'keep the background (it changes by default)')
    .option('--interpolate-from-original', 'interpolate the result from the original using the light transfer strength')
    .option('--no-preserve-details', 'do not keep texture and small details (kept by default)')
    .addOption(
      new Option('--engine <engine>', `advanced: engine (default ${ADVANCED_SETTINGS.defaultChoice})`).choices(
        ADVANCED_SETTINGS.engines,
      ),
    )
    .addOption(
      new Option(
        '--transfer-light-a <mode>',
        `advanced: light transfer A (default ${ADVANCED_SETTINGS.defaultChoice})`,
      ).choices(ADVANCED_SETTINGS.transferLightA),
    )
    .addOption(
      new Option(
        '--transfer-light-b <mode>',
        `advanced: light transfer B (default ${ADVANCED_SETTINGS.defaultChoice})`,
      ).choices(ADVANCED_SETTINGS.transferLightB),
    )
    .option('--whites <n>', level('advanced: whites'))
    .option('--blacks <n>', level('advanced: blacks'))
    .option('--brightness <n>', level('advanced: brightness'))
    .option('--contrast <n>', level('advanced: contrast'))
    .option('--saturation <n>', level('advanced: saturation'))
    .option('--fixed-generation', 'advanced: the same input gives the same result')
    .option('--webhook-url <url>', 'the registry POSTs each status change of the task there (signed)');
}

/** The relight request's body from the argument and flags, media read from files or URLs. */
async function relightBody(image: string, options: RelightOptions) {
  const reference = either(
    options.transferLightFromReferenceImage,
    options.referenceImage,
    '--transfer-light-from-reference-image',
    '--reference-image',
  );
  const lightmap = either(
    options.transferLightFromLightmap,
    options.lightmap,
    '--transfer-light-from-lightmap',
    '--lightmap',
  );
  const advanced = defined({
    engine: options.engine,
    transfer_light_a: options.transferLightA,
    transfer_light_b: options.transferLightB,
    whites: toNumber(options.whites),
    blacks: toNumber(options.blacks),
    brightness: toNumber(options.brightness),
    contrast: toNumber(options.contrast),
    saturation: toNumber(options.saturation),
    fixed_generation: options.fixedGeneration,
  });
  return defined({
    image: await mediaArgument(image, '<image>'),
    prompt: options.prompt,
    light_transfer_strength: toNumber(options.lightTransferStrength),
    style: options.style,
    transfer_light_from_reference_image:
      reference === undefined ? undefined : await mediaArgument(reference, '--transfer-light-from-reference-image'),
    transfer_light_from_lightmap:
      lightmap === undefined ? undefined : await mediaArgument(lightmap, '--transfer-light-from-lightmap'),
    change_background: options.changeBackground ? undefined : false,
    interpolate_from_original: options.interpolateFromOriginal,
    preserve_details: options.preserveDetails ? undefined : false,
    advanced_settings: Object.keys(advanced).length ? advanced : undefined,
    webhook_url: options.webhookUrl,
  });
}

export function register(program: Command, ctx: Ctx): void {
  const command = relightCommand(program);
  addWaitOptions(command).action(async (image: string, options: RelightOptions) => {
    const plan = waitPlan(options, ctx.out.json);
    const body = await relightBody(image, options);
    const checked = await validateBody(routes.relightImage, body, { image: '<image>' });
    const client = await ctx.client({ requireToken: true });
    const answer = await client.call(routes.relightImage, { body: checked }, { timeoutMs: plan.timeoutMs });
    await finishTask(ctx, client, 'relight', answer, plan, true);
  });
  examples(command, [
    'nodereg relight photo.jpg --prompt "warm sunset light" --output relit.png',
    'nodereg relight https://example.com/photo.jpg --style brighter --reference-image light.jpg --wait',
    'nodereg relight photo.jpg --light-transfer-strength 60 --no-change-background   # prints the task id',
  ]);
}
