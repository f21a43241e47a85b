// Free of zod, so that the CLI can check a registry URL without loading the schema library.

/** Whether `value` is written as an absolute http(s) URL (forms the URL parser would repair are not). */
export function isHttpUrl(value: string): boolean {
  // The URL parser repairs `http:host` or `http:\\host`; insist on the written form first. The host and
  // the rest cannot overlap (the rest starts with / ? or #): the match is linear, whatever the input.
  if (!/^https?:\/\/[^\s\\/?#]+(?:[/?#][^\s\\]*)?$/i.test(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}
