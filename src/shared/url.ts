// Masks the secrets a URL may carry before text is shown or logged.

/**
 * A URL's user info (`user:pass@`, `token@`), to the last `@` of its host part. Anchored on `://` and
 * stopped by `/`: linear, whatever the text.
 */
const USER_INFO = /(:\/\/)[^\s/?#]*@/g;
/** A password given in a URL's query (`postgres://host/db?password=…`, which PostgreSQL's clients read). */
const QUERY_PASSWORD = /([?&]password=)[^\s&#'"]*/gi;
/**
 * Text with every URL's user info shown as `***@`, and a password in its query as `password=***`: a
 * user name can be a secret too (a token as the user of `https://TOKEN@host`). The one mask of the
 * CLI's output and the server's log lines.
 */
export const withoutUrlSecrets = (text: string) =>
  text.includes('://') ? text.replace(USER_INFO, '$1***@').replace(QUERY_PASSWORD, '$1***') : text;
