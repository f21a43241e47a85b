import * as z from 'zod';
import { op } from './operation.js';
import { ImageTaskReference, ImageTaskStatus, VideoExtendResponse, VideoTaskStatus } from './resources.js';
import {
  ADVANCED_SETTINGS,
  IDENTIFIER_MAX,
  JSON_BODY_MAX,
  MEDIA_URL_MAX,
  PERCENT,
  RELIGHT,
  SKIN_ENHANCER,
  VIDEO_CREDITS,
  VIDEO_EXTEND,
} from './limits.js';
import { httpUrl } from './fields.js';

const percent = (fallback: number) => z.number().int().min(PERCENT.min).max(PERCENT.max).default(fallback);

/**
 * Base64 content or a URL: anything non-empty within the body limit, a URL at most MEDIA_URL_MAX
 * characters (it is stored and echoed as given); the sandbox and the providers judge the rest.
 */
const imageSource = z
  .string()
  .min(1, 'must be base64 content or a URL')
  .max(JSON_BODY_MAX)
  .refine(
    (value) => value.length <= MEDIA_URL_MAX || !/^\s*https?:/i.test(value),
    `a URL must be at most ${MEDIA_URL_MAX} characters`,
  );

/**
 * Checks the weight syntax of a relight prompt. A group `(text:w)` weights `text` by `w`:
 * `text` holds no `(`, `)` or `:`, `w` is a decimal with at most two places, 1 ≤ w ≤ 1.4.
 * Parentheses without `:w` are plain text; nested or malformed groups are errors.
 * Returns the first problem found, or null.
 */
export function promptWeightProblem(prompt: string): string | null {
  const { min, max, maxDecimals } = RELIGHT.promptWeight;
  const group = new RegExp(`^[^():]+:(\\d+(?:\\.\\d{1,${maxDecimals}})?)$`);
  // One pass, and only weighted groups (which never overlap) are sliced: linear in the prompt's length.
  const open: number[] = [];
  let lastOpen = -1;
  let lastColon = -1;
  for (let i = 0; i < prompt.length; i++) {
    const char = prompt[i];
    if (char === ':') lastColon = i;
    if (char === '(') open.push((lastOpen = i));
    if (char !== ')') continue;
    const start = open.pop();
    if (start === undefined) continue; // a stray ")" is plain text
    if (lastColon < start) continue; // parentheses without a weight are plain text
    if (lastOpen > start || open.length > 0) return `nested weighted group at character ${start + 1}`;
    const inner = prompt.slice(start + 1, i);
    const match = group.exec(inner);
    if (!match) return `malformed weighted group "(${inner})": write (text:weight) with a weight like 1.2`;
    const weight = Number(match[1]);
    if (weight < min || weight > max) return `weight ${match[1]} of "(${inner})" must be from ${min} to ${max}`;
  }
  if (open.length > 0 && lastColon > open[0]) return `unclosed weighted group at character ${open[0] + 1}`;
  return null;
}

export const AdvancedSettings = z.object({
  blacks: percent(ADVANCED_SETTINGS.levels.default),
  brightness: percent(ADVANCED_SETTINGS.levels.default),
  contrast: percent(ADVANCED_SETTINGS.levels.default),
  engine: z.enum(ADVANCED_SETTINGS.engines).default(ADVANCED_SETTINGS.defaultChoice),
  fixed_generation: z.boolean().default(ADVANCED_SETTINGS.fixedGeneration),
  saturation: percent(ADVANCED_SETTINGS.levels.default),
  transfer_light_a: z.enum(ADVANCED_SETTINGS.transferLightA).default(ADVANCED_SETTINGS.defaultChoice),
  transfer_light_b: z.enum(ADVANCED_SETTINGS.transferLightB).default(ADVANCED_SETTINGS.defaultChoice),
  whites: percent(ADVANCED_SETTINGS.levels.default),
});

export const RelightBody = z
  .object({
    image: imageSource,
    advanced_settings: AdvancedSettings.optional(),
    change_background: z.boolean().default(RELIGHT.changeBackground),
    interpolate_from_original: z.boolean().default(RELIGHT.interpolateFromOriginal),
    light_transfer_strength: percent(RELIGHT.lightTransferStrength.default),
    preserve_details: z.boolean().default(RELIGHT.preserveDetails),
    prompt: z
      .string()
      .max(RELIGHT.promptMax, { abort: true })
      .superRefine((prompt, ctx) => {
        const problem = promptWeightProblem(prompt);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
    style: z.enum(RELIGHT.styles).default(RELIGHT.defaultStyle),
    transfer_light_from_lightmap: imageSource.optional(),
    transfer_light_from_reference_image: imageSource.optional(),
    webhook_url: httpUrl.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.transfer_light_from_lightmap !== undefined && body.transfer_light_from_reference_image !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['transfer_light_from_reference_image'],
        message: 'cannot be given together with transfer_light_from_lightmap: choose one light source',
      });
    }
  });
export type RelightBody = z.input<typeof RelightBody>;

export const SkinEnhancerBody = z.object({
  image: imageSource,
  optimized_for: z.enum(SKIN_ENHANCER.optimizedFor).default(SKIN_ENHANCER.defaultOptimizedFor),
  sharpen: percent(SKIN_ENHANCER.sharpen.default),
  smart_grain: percent(SKIN_ENHANCER.smartGrain.default),
  webhook_url: httpUrl.optional(),
});
export type SkinEnhancerBody = z.input<typeof SkinEnhancerBody>;

export const VideoExtendBody = z
  .object({
    model: z.enum(VIDEO_EXTEND.models),
    callback_url: httpUrl.optional(),
    duration: z
      .number()
      .int()
      .min(VIDEO_EXTEND.duration.min)
      .max(VIDEO_EXTEND.duration.max)
      .default(VIDEO_EXTEND.duration.default),
    images: z
      .array(imageSource)
      .length(VIDEO_EXTEND.images, `exactly ${VIDEO_EXTEND.images} image is accepted`)
      .optional(),
    payload: z.string().max(VIDEO_EXTEND.payloadMax).optional(),
    prompt: z.string().max(VIDEO_EXTEND.promptMax).optional(),
    resolution: z.enum(VIDEO_EXTEND.resolutions).default(VIDEO_EXTEND.defaultResolution),
    video_creation_id: z.string().min(1).max(IDENTIFIER_MAX).optional(),
    video_url: imageSource.optional(),
  })
  .superRefine((body, ctx) => {
    // The spec: video_creation_id and video_url go together, either both or neither.
    if (body.video_creation_id !== undefined && body.video_url === undefined) {
      ctx.addIssue({ code: 'custom', path: ['video_url'], message: 'is required together with video_creation_id' });
    }
    if (body.video_url !== undefined && body.video_creation_id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['video_creation_id'], message: 'is required together with video_url' });
    }
  });
export type VideoExtendBody = z.input<typeof VideoExtendBody>;

/**
 * A video extend answer repeats the request's settings and URLs, never its content: base64 images or
 * video and the pass-through `payload` can be megabytes the caller already has.
 */
export function withoutRequestContent<T extends Record<string, unknown>>(answer: T): T {
  const isUrl = (value: unknown) => typeof value === 'string' && /^https?:\/\//i.test(value);
  const { payload: _, ...rest } = answer as Record<string, unknown>;
  if (rest.video_url !== undefined && !isUrl(rest.video_url)) delete rest.video_url;
  if (Array.isArray(rest.images) && !rest.images.every(isUrl)) delete rest.images;
  return rest as T;
}

/** Credits a video task costs: base + perSecond × (duration − 1), by model and resolution. */
export function videoCredits(model: keyof typeof VIDEO_CREDITS, resolution: string, duration: number): number {
  const rate = resolution === '1080p' ? VIDEO_CREDITS[model]['1080p'] : VIDEO_CREDITS[model].standard;
  return rate.base + rate.perSecond * (duration - 1);
}

// ---------- the three proxy operations of the interface, and status polling ----------

export const relightImage = op({
  id: 'relightImage',
  method: 'POST',
  path: '/proxy/img/v1/ai/image-relight',
  summary: 'Relight an image; the relight process has started',
  spec: true,
  auth: 'user',
  body: RelightBody,
  bodyMax: JSON_BODY_MAX,
  response: ImageTaskReference,
});
export const skinEnhance = op({
  id: 'skinEnhance',
  method: 'POST',
  path: '/proxy/img/v1/ai/skin-enhancer/flexible',
  summary: 'Enhance skin in an image; the process has started',
  spec: true,
  auth: 'user',
  body: SkinEnhancerBody,
  bodyMax: JSON_BODY_MAX,
  response: ImageTaskReference,
});
export const extendVideo = op({
  id: 'extendVideo',
  method: 'POST',
  path: '/proxy/vid/extend',
  summary: 'Extend a video',
  spec: true,
  auth: 'user',
  body: VideoExtendBody,
  bodyMax: JSON_BODY_MAX,
  response: VideoExtendResponse,
});
export const getRelightTask = op({
  id: 'getRelightTask',
  method: 'GET',
  path: '/proxy/img/v1/ai/image-relight/{task_id}',
  summary: 'Status and results of a relight task',
  auth: 'user',
  response: ImageTaskStatus,
});
export const getSkinEnhancerTask = op({
  id: 'getSkinEnhancerTask',
  method: 'GET',
  path: '/proxy/img/v1/ai/skin-enhancer/{task_id}',
  summary: 'Status and results of a skin enhancer task',
  auth: 'user',
  response: ImageTaskStatus,
});
export const getVideoTask = op({
  id: 'getVideoTask',
  method: 'GET',
  path: '/proxy/vid/tasks/{task_id}/creations',
  summary: 'State and creations of a video task',
  auth: 'user',
  response: VideoTaskStatus,
});

export const proxyOperations = [
  relightImage,
  skinEnhance,
  extendVideo,
  getRelightTask,
  getSkinEnhancerTask,
  getVideoTask,
];
