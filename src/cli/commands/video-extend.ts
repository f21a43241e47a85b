import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { VIDEO_EXTEND } from '../../contract/limits.js';
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
import { invalidInput } from '../errors.js';
import { examples } from '../examples.js';
import { routes } from '../../client/routes.js';
import { withoutRequestContent } from '../../contract/video-answer.js';

interface VideoOptions extends WaitOptions {
  model: string;
  videoUrl?: string;
  videoCreationId?: string;
  image?: string;
  prompt?: string;
  duration?: string;
  resolution?: string;
  payload?: string;
  payloadFile?: string;
  callbackUrl?: string;
}

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('video-extend')
    .description("extend a video through the registry's AI proxy")
    .addOption(new Option('--model <model>', 'the model').choices(VIDEO_EXTEND.models).makeOptionMandatory())
    .option(
      '--video-url <video>',
      'the video to extend: an http(s) URL or a local file (sent as base64); needs --video-creation-id',
    )
    .option('--video-creation-id <id>', 'the creation id of that video; needs --video-url')
    .option('--image <image>', 'reference image for the end frame (file or URL)')
    .option('--prompt <text>', `what should happen, at most ${VIDEO_EXTEND.promptMax} characters`)
    .option(
      '--duration <seconds>',
      `seconds to add, ${VIDEO_EXTEND.duration.min}–${VIDEO_EXTEND.duration.max} (default ${VIDEO_EXTEND.duration.default})`,
    )
    .addOption(
      new Option('--resolution <resolution>', `(default ${VIDEO_EXTEND.defaultResolution})`).choices(
        VIDEO_EXTEND.resolutions,
      ),
    )
    .addOption(
      new Option(
        '--payload <text>',
        `pass-through parameters, at most ${VIDEO_EXTEND.payloadMax} characters`,
      ).conflicts('payloadFile'),
    )
    .option('--payload-file <file>', 'read --payload from a file (- for stdin)')
    .option('--callback-url <url>', 'the registry POSTs each state change of the task there (signed)');
  addWaitOptions(command).action(async (options: VideoOptions) => {
    const plan = waitPlan(options, ctx.out.json);
    let payload = options.payload;
    if (options.payloadFile !== undefined) {
      try {
        payload = options.payloadFile === '-' ? await ctx.readStdin() : await readFile(options.payloadFile, 'utf8');
      } catch (error) {
        throw invalidInput(`--payload-file: cannot read "${options.payloadFile}": ${(error as Error).message}`);
      }
    }
    const body = defined({
      model: options.model,
      video_url: options.videoUrl === undefined ? undefined : await mediaArgument(options.videoUrl, '--video-url'),
      video_creation_id: options.videoCreationId,
      images: options.image === undefined ? undefined : [await mediaArgument(options.image, '--image')],
      prompt: options.prompt,
      duration: toNumber(options.duration),
      resolution: options.resolution,
      payload,
      callback_url: options.callbackUrl,
    });
    const checked = await validateBody(routes.extendVideo, body, {
      images: '--image',
      payload: options.payloadFile !== undefined ? '--payload-file' : '--payload',
    });
    const client = await ctx.client({ requireToken: true });
    // a server that echoes the request's images or payload does not get them printed back
    const answer = withoutRequestContent(
      (await client.call(routes.extendVideo, { body: checked }, { timeoutMs: plan.timeoutMs })) as Record<
        string,
        unknown
      >,
    );
    await finishTask(ctx, client, 'video', answer, plan, true);
  });
  examples(command, [
    'nodereg video-extend --model vidq2-turbo --video-url https://example.com/clip.mp4 --video-creation-id c-123 --duration 3 --output extended.mp4',
    'nodereg video-extend --model vidq2-pro --image end-frame.png --prompt "the camera pans left" --resolution 1080p --wait',
  ]);
}
