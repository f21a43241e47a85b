import * as z from 'zod';
import { IMAGE_TASK_STATUS, VIDEO_TASK_STATE } from '../limits.js';
import { isoDate, strings } from './fields.js';

export const ImageTaskReference = z.looseObject({
  data: z.looseObject({ generated: strings, task_id: z.string() }),
});
export type ImageTaskReference = z.infer<typeof ImageTaskReference>;

export const VideoExtendResponse = z.looseObject({
  credits: z.number().int(),
  state: z.enum(VIDEO_TASK_STATE),
  task_id: z.string(),
  created_at: isoDate.optional(),
  duration: z.number().int().optional(),
  images: strings.optional(),
  model: z.string().optional(),
  payload: z.string().optional(),
  prompt: z.string().optional(),
  resolution: z.string().optional(),
  video_creation_id: z.string().optional(),
  video_url: z.string().optional(),
});
export type VideoExtendResponse = z.infer<typeof VideoExtendResponse>;

export const ImageTaskStatus = z.looseObject({
  data: z.looseObject({ task_id: z.string(), status: z.enum(IMAGE_TASK_STATUS), generated: strings }),
});
export type ImageTaskStatus = z.infer<typeof ImageTaskStatus>;

export const VideoTaskStatus = z.looseObject({
  task_id: z.string(),
  state: z.enum(VIDEO_TASK_STATE),
  credits: z.number().int(),
  creations: z.array(z.looseObject({ id: z.string(), url: z.string() })),
});
export type VideoTaskStatus = z.infer<typeof VideoTaskStatus>;
