// What a video extend answer may repeat of its request: free of zod, for the CLI that prints one.

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
