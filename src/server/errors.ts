import { clipMessage, ERROR_STATUS, type ErrorBody, type ErrorCode, type FieldError } from '../contract/errors.js';

/** An error the server answers in the shape of DESIGN.md §2. Throw it from any layer. */
export class HttpError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: FieldError[],
    readonly hint?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }

  body(): ErrorBody {
    return {
      error: this.code,
      message: clipMessage(this.message),
      ...(this.details?.length ? { details: this.details } : {}),
      ...(this.hint ? { hint: this.hint } : {}),
    };
  }
}

export const badRequest = (message: string, details?: FieldError[]) =>
  new HttpError('invalid_request', message, details);
export const unauthorized = (message = 'a bearer token is required: Authorization: Bearer <token>') =>
  new HttpError('unauthorized', message);
export const forbidden = (message: string, hint?: string) => new HttpError('forbidden', message, undefined, hint);
// The hint says who can lift a ban: not the caller's token, whatever it is (the CLI's default 403 hint said to check it).
export const banned = (message: string) =>
  new HttpError('banned', message, undefined, 'a registry admin banned it: only an admin can lift the ban');
export const notFound = (message: string) => new HttpError('not_found', message);
export const conflict = (message: string, hint?: string) => new HttpError('conflict', message, undefined, hint);
export const tooLarge = (message: string, hint?: string) =>
  new HttpError('payload_too_large', message, undefined, hint);
export const unsupportedMediaType = (message: string) => new HttpError('unsupported_media_type', message);

/**
 * The raw HTTP answer, written on the socket itself: for errors raised before any request is read
 * (Node's parser errors and timeouts, CONNECT; src/server/http/).
 */
export function rawErrorResponse(
  status: number,
  code: ErrorCode,
  message: string,
  error: HttpError = new HttpError(code, message),
): string {
  const body = JSON.stringify(error.body());
  const headers = Object.entries({ ...error.headers, Connection: 'close' }).map(
    ([name, value]) => `${name}: ${value}\r\n`,
  );
  return `HTTP/1.1 ${status} ${code}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headers.join('')}\r\n${body}`;
}

/**
 * The same error as an answer given before the request's body is read: the connection closes after
 * it, and the rest of the body is only dropped (src/server/http/: closeAfterResponse).
 */
export function closesConnection(error: HttpError): HttpError {
  return new HttpError(error.code, error.message, error.details, error.hint, { ...error.headers, Connection: 'close' });
}
