// The 415 rules of a request body and their words, written once: the server answers with them
// (route.ts, routes/uploads.ts), the OpenAPI document describes them (openapi.ts). Free of zod.

/** The media type each kind of body is sent as. */
export const BODY_MEDIA_TYPES = { json: 'application/json', zip: 'application/zip' } as const;
export type BodyMedia = keyof typeof BODY_MEDIA_TYPES;

/** What the type may be written as: JSON with a structured suffix (`application/problem+json`) or parameters; a zip with parameters only. */
const ACCEPTED_TYPE: Record<BodyMedia, RegExp> = {
  json: /^application\/([\w.+-]+\+)?json\b/i,
  zip: /^application\/zip\s*(;|$)/i,
};
const BODY_NAME: Record<BodyMedia, string> = { json: 'the body as JSON', zip: 'the archive' };

/** The 415 message of a body of `kind` sent with the Content-Type `header`; undefined when it is the right one. */
export function contentTypeProblem(kind: BodyMedia, header: string | undefined): string | undefined {
  const type = header?.trim() ?? '';
  if (ACCEPTED_TYPE[kind].test(type)) return undefined;
  return `send ${BODY_NAME[kind]} with Content-Type: ${BODY_MEDIA_TYPES[kind]} (got "${type || 'none'}")`;
}

/**
 * The only Content-Encoding a body may be sent with (or none): bodies are read as sent, so a compressed
 * one read as JSON or as a zip would be junk.
 */
export const BODY_ENCODING = 'identity';

/** The 415 message of a body sent with the Content-Encoding `header`; undefined for none or identity. */
export function contentEncodingProblem(header: string | undefined): string | undefined {
  const encoding = header?.trim() ?? '';
  if (encoding === '' || encoding.toLowerCase() === BODY_ENCODING) return undefined;
  return `the server does not decode Content-Encoding: ${JSON.stringify(encoding).slice(1, -1)}; send the body unencoded (no Content-Encoding header)`;
}

/** The 415 of an operation with a body of `kind`, as the OpenAPI document describes it. */
export const mediaRefusal = (kind: BodyMedia) =>
  `the body is not sent with Content-Type: ${BODY_MEDIA_TYPES[kind]}, or it is sent with a Content-Encoding other than ${BODY_ENCODING} (the server does not decode one); refused before the body is read`;
