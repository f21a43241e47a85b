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
  constructor(
    readonly url: string,
    readonly reason: string,
    readonly transient = true,
  ) {
    super(`cannot reach ${url}: ${reason}`);
    this.name = 'NetworkError';
  }
}

/**
 * An answer no registry gives, so the URL is not a registry's (another server, or ours under a wrong
 * path): a 2xx that is not JSON (or, for an exact read, not the contract's shape), or a 404 that is not
 * a registry's error answer (a page, another JSON, the 404 of a path no route serves).
 */
export class ForeignAnswerError extends Error {
  /** `answered`: its HTTP status (not `status`, which callers read as a registry's own answer). */
  constructor(
    readonly registry: string,
    readonly url: string,
    readonly answered: number,
    readonly what: string,
  ) {
    super(`${registry} does not answer as a nodereg or Comfy registry: ${url} answered HTTP ${answered} ${what}`);
    this.name = 'ForeignAnswerError';
  }
}
