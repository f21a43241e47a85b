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

/**
 * A URL's user info (`user:pass@`, `token@`), to the last `@` of its host part. Anchored on `://` and
 * stopped by `/`: linear, whatever the text.
 */
const USER_INFO = /(:\/\/)[^\s/?#]*@/g;
/**
 * Text with every URL's user info shown as `***@`: a user name can be a secret too (a token as the user
 * of `https://TOKEN@host`). The one mask of the CLI's output and the server's log lines.
 */
export const withoutUserInfo = (text: string) => (text.includes('://') ? text.replace(USER_INFO, '$1***@') : text);
