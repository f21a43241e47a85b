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
import { httpUrl, rule, transform } from './fields.js';

const percent = (fallback: number) => z.number().int().min(PERCENT.min).max(PERCENT.max).default(fallback);

/**
 * Base64 content or a URL: anything non-empty within the body limit, a URL at most MEDIA_URL_MAX
 * characters (it is stored and echoed as given); the sandbox and the providers judge the rest.
 */
const imageSource = rule(
  z.string().min(1, 'must be base64 content or a URL').max(JSON_BODY_MAX),
  'shortMediaUrl',
  `a URL must be at most ${MEDIA_URL_MAX} characters`,
);

export { promptWeightProblem } from './rules.js';

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

export const RelightBody = rule(
  z.object({
    image: imageSource,
    advanced_settings: AdvancedSettings.optional(),
    change_background: z.boolean().default(RELIGHT.changeBackground),
    interpolate_from_original: z.boolean().default(RELIGHT.interpolateFromOriginal),
    light_transfer_strength: percent(RELIGHT.lightTransferStrength.default),
    preserve_details: z.boolean().default(RELIGHT.preserveDetails),
    prompt: transform(z.string().max(RELIGHT.promptMax, { abort: true }), 'promptWeights').optional(),
    style: z.enum(RELIGHT.styles).default(RELIGHT.defaultStyle),
    transfer_light_from_lightmap: imageSource.optional(),
    transfer_light_from_reference_image: imageSource.optional(),
    webhook_url: httpUrl.optional(),
  }),
  'oneLightSource',
  'cannot be given together with transfer_light_from_lightmap: choose one light source',
  ['transfer_light_from_reference_image'],
);
export type RelightBody = z.input<typeof RelightBody>;

export const SkinEnhancerBody = z.object({
  image: imageSource,
  optimized_for: z.enum(SKIN_ENHANCER.optimizedFor).default(SKIN_ENHANCER.defaultOptimizedFor),
  sharpen: percent(SKIN_ENHANCER.sharpen.default),
  smart_grain: percent(SKIN_ENHANCER.smartGrain.default),
  webhook_url: httpUrl.optional(),
});
export type SkinEnhancerBody = z.input<typeof SkinEnhancerBody>;

// The spec: video_creation_id and video_url go together, either both or neither.
export const VideoExtendBody = rule(
  rule(
    z.object({
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
    }),
    'videoUrlWithId',
    'is required together with video_creation_id',
    ['video_url'],
  ),
  'videoIdWithUrl',
  'is required together with video_url',
  ['video_creation_id'],
);
export type VideoExtendBody = z.input<typeof VideoExtendBody>;

export { withoutRequestContent } from './video-answer.js';

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
