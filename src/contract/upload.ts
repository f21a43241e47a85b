// The wire rules of an archive upload beyond its body: the forms of a signed upload URL's query and
// of the X-Content-SHA256 header, and what the server says when the header is not in its form. Free
// of zod: the client and the server's signature check use them without loading the schemas;
// registry.ts builds the operation's schemas (and so the OpenAPI document) from the same patterns.

/** The header an upload carries its archive's SHA-256 in; the server checks the bytes it receives against it. */
export const CONTENT_SHA256_HEADER = 'X-Content-SHA256';
/** A SHA-256 as 64 hex characters: the X-Content-SHA256 header, and an upload URL's `signature` (an HMAC-SHA256). */
export const SHA256_HEX_PATTERN = '^[0-9a-fA-F]{64}$';
/** An upload URL's `expires`: Unix seconds, at most 15 digits, so that the number is exact. */
export const UNIX_SECONDS_PATTERN = '^\\d{1,15}$';

const SHA256_HEX = new RegExp(SHA256_HEX_PATTERN);
const UNIX_SECONDS = new RegExp(UNIX_SECONDS_PATTERN);

/** Whether a signed upload URL's `expires` and `signature` are in their forms (whether they are right is the signature's check). */
export const isUploadQueryForm = (expires: string, signature: string) =>
  UNIX_SECONDS.test(expires) && SHA256_HEX.test(signature);

/** The 400 of an X-Content-SHA256 header that is not 64 hex characters; undefined when it is, or is absent. */
export function contentSha256Problem(value: string | undefined): string | undefined {
  if (value === undefined || SHA256_HEX.test(value)) return undefined;
  return `${CONTENT_SHA256_HEADER} must be the archive's SHA-256 as 64 hex characters`;
}
