// The client's error types, in a module of their own: the CLI's error mapping loads them
// without loading the HTTP client or zod.
import type { FieldError } from '../contract/errors.js';

/** The server answered with an error body (or a status without one). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
    readonly details?: FieldError[],
    readonly retryAfter?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The server could not be reached, or did not answer in time. */
export class NetworkError extends Error {
  /** `transient`: whether trying again may mend it (not for an answer too large to read). */
  constructor(readonly url: string, readonly reason: string, readonly transient = true) {
    super(`cannot reach ${url}: ${reason}`);
    this.name = 'NetworkError';
  }
}

/** A 2xx answer that is not what a registry answers: not JSON, or (for a read that must be exact) not the contract's shape. */
export class ForeignAnswerError extends Error {
  constructor(readonly url: string, readonly status: number, readonly what: 'not JSON' | 'not the shape of a registry\'s answer') {
    super(`${url} answered HTTP ${status} with a body that is ${what}`);
    this.name = 'ForeignAnswerError';
  }
}

/** Our own request failed the contract before anything was sent. */
export class RequestInvalidError extends Error {
  constructor(readonly where: 'params' | 'query' | 'body', readonly details: FieldError[]) {
    super(`invalid ${where}: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`);
    this.name = 'RequestInvalidError';
  }
}

