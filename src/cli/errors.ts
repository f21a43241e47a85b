import { ApiError, ForeignAnswerError, NetworkError } from '../client/errors.js';
import { fieldKey } from '../shared/field-keys.js';
import { REQUEST_TIMEOUT_MS } from '../shared/tuning.js';
export { EXIT, EXIT_MEANINGS, exitCodeForSignal, exitCodesHelp, type ExplainedCommand } from './exit-codes.js';
import { EXIT } from './exit-codes.js';

/** A failure the CLI reports in plain words, with the exit code it ends with and a hint to fix it. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
    readonly code: string = 'error',
    readonly hint?: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
  /** Structured facts --json adds to the error beside its message (validate's scan findings, every one). */
  fields?: Record<string, unknown>;
}

/**
 * The command has printed its result and ends with `exitCode` without a word more (a scan that found
 * what --fail-on stops at): nothing is written to stdout or stderr for it.
 */
export class ResultExit extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
    this.name = 'ResultExit';
  }
}

/** Invalid input: exit 2. `flag` names what to fix. */
export function invalidInput(message: string, hint?: string): CliError {
  return new CliError(message, EXIT.invalid, 'invalid_input', hint);
}

export function exitCodeForStatus(status: number): number {
  if (status === 400 || status === 413 || status === 415 || status === 422) return EXIT.invalid;
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  if (status === 409) return EXIT.conflict;
  return EXIT.failure;
}

/** `light_transfer_strength` → `--light-transfer-strength`: the option a user sets for a field. */
export function flagForField(path: string): string {
  const last =
    path
      .split('.')
      .filter((part) => !/^\d+$/.test(part))
      .pop() ?? path;
  return `--${fieldKey(last)}`;
}

/** What to fix when the registry URL answers as no registry does. */
const FOREIGN_HINT =
  "another server answered, or the path is wrong: set the registry's root URL (as `nodereg serve` prints it) with --registry or NODEREG_REGISTRY, or in the profile (nodereg config set registry, then the URL)";

const defaultHints: Record<number, string> = {
  401: 'set a token with NODEREG_TOKEN=<token>, --token <token>, or run `nodereg login`',
  403: 'check that your token belongs to this publisher (`nodereg whoami`)',
  429: 'wait a moment and try again',
};

/** Turns anything thrown into a CliError; a command may pass hints for statuses it knows better. */
export function toCliError(error: unknown, hints: Partial<Record<number, string>> = {}): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof ApiError) {
    const details = error.details?.length ? ` (${error.details.map((d) => `${d.path}: ${d.message}`).join('; ')})` : '';
    const hint =
      hints[error.status] ??
      error.hint ??
      (error.status === 429 && error.retryAfter ? `try again in ${error.retryAfter} s` : defaultHints[error.status]);
    return new CliError(`${error.message}${details}`, exitCodeForStatus(error.status), error.code, hint, error.status);
  }
  if (error instanceof ForeignAnswerError) {
    // A URL that is not a registry's is a setting to fix, as a bad flag is: exit 2, not a failure to retry.
    return new CliError(error.message, EXIT.invalid, 'bad_answer', FOREIGN_HINT);
  }
  if (error instanceof NetworkError && error.reason === 'no answer in time') {
    // It answered, or took the connection, but slowly: the URL is most likely right.
    const hint = `the registry, or a proxy in front of it, gave no whole answer within ${REQUEST_TIMEOUT_MS / 1000} s (a request that timed out is not sent again): try again later`;
    return new CliError(error.message, EXIT.failure, 'network', hint);
  }
  if (error instanceof NetworkError && error.url.startsWith('https:') && error.reason.startsWith('EPROTO')) {
    // The TLS handshake met a server that answers plain HTTP, as `nodereg serve` does.
    const plain = error.url.replace(/^https:/, 'http:').replace(/(\/\/[^/]+).*$/, '$1');
    return new CliError(
      error.message,
      EXIT.failure,
      'network',
      `the server there speaks http, not https (as \`nodereg serve\` does): write ${plain} in --registry or NODEREG_REGISTRY`,
    );
  }
  if (error instanceof NetworkError) {
    return new CliError(
      error.message,
      EXIT.failure,
      'network',
      `is the registry running and the URL right? Set it with --registry or NODEREG_REGISTRY; start a local one with \`nodereg serve\`; ${DEFAULT_WAIT_HINT}`,
    );
  }
  const name = (error as { name?: string } | undefined)?.name;
  if (name === 'ExitPromptError' || name === 'AbortPromptError')
    return new CliError('interrupted', EXIT.interrupted, 'interrupted');
  const message = error instanceof Error ? error.message : String(error);
  return new CliError(message, EXIT.failure, 'internal');
}

/** The end of an unreachable registry's hint; the run's context replaces it with the window it used. */
export const DEFAULT_WAIT_HINT = '--retry-window 5m waits longer for one that is starting';

/** Why a file could not be read or written, in plain words rather than an errno code. */
export function fileProblem(error: unknown): string {
  const words: Record<string, string> = {
    ENOENT: 'no such file or directory',
    ENOTDIR: 'a part of the path is not a directory',
    EISDIR: 'it is a directory',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EEXIST: 'it already exists',
    ENOSPC: 'the disk is full',
    EROFS: 'the file system is read-only',
  };
  return words[(error as NodeJS.ErrnoException).code ?? ''] ?? (error as Error).message;
}
