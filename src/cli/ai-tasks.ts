// What the AI proxy commands share (relight, skin-enhance, video-extend, task status): reading
// images and videos, validating before sending, waiting with a spinner, downloading results.
// Loads no zod and no HTTP client at import: help stays fast.
import { createWriteStream } from 'node:fs';
import { readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, extname, join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Option, type Command } from 'commander';
import type { Client } from '../client/index.js';
import type { Answer } from '../client/http.js';
import { JSON_BODY_MAX, type TASK_KINDS } from '../contract/limits.js';
import { AI_RESULT_MAX } from '../shared/tuning.js';
import type { BodyOf, Operation } from '../contract/operation.js';
import type { Ctx } from './context.js';
import { parseDuration } from './duration.js';
import { printable } from './output.js';
import { CliError, EXIT, fileProblem, flagForField, invalidInput } from './errors.js';
import { makeUserDir } from './make-dir.js';
import { routes } from '../client/routes.js';

export type TaskKind = (typeof TASK_KINDS)[number];

const DEFAULT_TIMEOUT = '20m';

export interface WaitOptions {
  wait?: boolean;
  timeout?: string;
  output?: string;
}

/** What --wait, --timeout and --output ask for, checked before any request. */
export interface WaitPlan {
  wait: boolean;
  timeoutMs: number;
  output?: string;
}

export function waitPlan(options: WaitOptions, json: boolean): WaitPlan {
  const timeoutMs = parseDuration(options.timeout ?? DEFAULT_TIMEOUT, '--timeout');
  if (options.output === '') throw invalidInput('--output needs a file or directory');
  if (options.output === STDOUT && json)
    throw invalidInput(
      '--output - writes the result to stdout, where --json writes its document',
      'pass --output <file>, or drop --json',
    );
  return { wait: Boolean(options.wait || options.output), timeoutMs, output: options.output };
}

/** `--wait`, `--timeout`, `--output`: the same on every AI command. */
export function addWaitOptions(command: Command): Command {
  return command
    .option('--wait', 'wait until the task is done, showing its status')
    .option('--timeout <duration>', `how long --wait waits, e.g. 90s, 20m, 1h (default ${DEFAULT_TIMEOUT})`)
    .option(
      '--output <path>',
      'download the results to FILE (one result) or DIR, or - for stdout (one result); implies --wait',
    );
}

/** A hidden second name for an option (`--reference-image` for `--transfer-light-from-reference-image`). */
export function alias(flags: string): Option {
  return new Option(flags).hideHelp();
}

/** A number as typed; anything that is not one becomes NaN, which the contract rejects naming the flag. */
export function toNumber(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return value.trim() === '' ? Number.NaN : Number(value);
}

/** The one of two names a user gave (an option and its alias); both with different values is an error. */
export function either<T>(
  value: T | undefined,
  aliasValue: T | undefined,
  flag: string,
  aliasFlag: string,
): T | undefined {
  if (value !== undefined && aliasValue !== undefined && value !== aliasValue) {
    throw invalidInput(`${flag} and ${aliasFlag} are the same option: give it once`);
  }
  return value ?? aliasValue;
}

/** An image or video argument: an http(s) URL is sent as it is, anything else is a local file sent as base64. */
export async function mediaArgument(value: string, flag: string): Promise<string> {
  if (/^https?:\/\//i.test(value)) return value;
  let bytes: Buffer;
  try {
    bytes = await readFile(value);
  } catch (error) {
    throw invalidInput(`${flag}: cannot read "${value}": ${fileProblem(error)}`, 'give a local file or an http(s) URL');
  }
  if (bytes.length === 0) throw invalidInput(`${flag}: "${value}" is empty`);
  const encoded = bytes.toString('base64');
  if (encoded.length > JSON_BODY_MAX - 64 * 1024) {
    throw invalidInput(
      `${flag}: "${value}" is too large to send (${bytes.length} bytes; requests are limited to ${JSON_BODY_MAX} bytes of base64)`,
      'give an http(s) URL to the file instead',
    );
  }
  return encoded;
}

/**
 * Checks a body against the operation's schema before anything is sent: exit 2 naming the option to
 * fix. `flags` names options that differ from the field's kebab-case (`image` → `<image>`).
 */
export function validateBody<O extends Operation>(
  operation: O,
  body: unknown,
  flags: Record<string, string> = {},
): BodyOf<O> {
  const result = operation.body.safeParse(body);
  // what the schema outputs (its defaults filled in) is what is sent, and it meets the schema's input
  if (result.success) return result.data as BodyOf<O>;
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const field = issue.path.filter((part) => typeof part === 'string').pop() as string | undefined;
    const flag = (field && flags[field]) ?? flagForField(path);
    // an option that is not a number reaches the schema as NaN
    const message = issue.message.includes('received NaN') ? 'must be a number' : issue.message;
    return `${flag} (${path || 'body'}): ${message}`;
  });
  throw invalidInput(`invalid ${problems.join('; ')}`);
}

/** Drops undefined fields, so the contract's defaults apply to what the user did not give. */
export function defined<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as Partial<T>;
}

// ---------- status of a task ----------

/** A task's status and results, from either poll shape. */
export interface TaskState {
  id: string;
  status: string;
  results: string[];
  done: boolean;
  failed: boolean;
  credits?: number;
  error?: string;
}

export function readState(kind: TaskKind, answer: unknown): TaskState {
  const a = (answer ?? {}) as Record<string, unknown>;
  if (kind === 'video') {
    const state = String(a.state ?? 'unknown');
    const creations = Array.isArray(a.creations) ? (a.creations as { url?: unknown }[]) : [];
    return {
      id: String(a.task_id ?? ''),
      status: state,
      results: creations.map((c) => c.url).filter((url): url is string => typeof url === 'string'),
      done: state === 'success' || state === 'failed',
      failed: state === 'failed',
      credits: typeof a.credits === 'number' ? a.credits : undefined,
      error: typeof a.error === 'string' ? a.error : undefined,
    };
  }
  const data = (a.data ?? {}) as Record<string, unknown>;
  const status = String(data.status ?? 'CREATED');
  return {
    id: String(data.task_id ?? ''),
    status,
    results: Array.isArray(data.generated)
      ? (data.generated as unknown[]).filter((url): url is string => typeof url === 'string')
      : [],
    done: status === 'COMPLETED' || status === 'FAILED',
    failed: status === 'FAILED',
    error: typeof data.error === 'string' ? data.error : undefined,
  };
}

export async function fetchStatus(client: Client, kind: TaskKind, taskId: string): Promise<unknown> {
  const params = { task_id: taskId };
  if (kind === 'relight') return client.call(routes.getRelightTask, { params });
  if (kind === 'skin-enhancer') return client.call(routes.getSkinEnhancerTask, { params });
  return client.call(routes.getVideoTask, { params });
}

const followHint = (kind: TaskKind, id: string) => `nodereg task status ${kind} ${id} --wait`;

/**
 * Polls a task until it is done, showing its status (a spinner on a terminal, a line per change
 * otherwise). Ctrl-C stops waiting and leaves the task running (exit 130); so does the timeout (exit 1).
 */
export async function waitForTask(
  ctx: Ctx,
  client: Client,
  kind: TaskKind,
  taskId: string,
  timeoutMs: number,
): Promise<unknown> {
  const interrupted = new AbortController();
  const onSigint = () => interrupted.abort();
  // `on`, not `once`: while a listener stays, ora's cursor restorer (signal-exit) does not re-raise the signal.
  process.on('SIGINT', onSigint);
  const stopped = new Promise<never>((_, reject) =>
    interrupted.signal.addEventListener(
      'abort',
      () =>
        reject(
          new CliError(
            `stopped waiting; ${kind} task ${taskId} keeps running`,
            EXIT.interrupted,
            'interrupted',
            `follow it later: ${followHint(kind, taskId)}`,
          ),
        ),
      { once: true },
    ),
  );
  stopped.catch(() => {});
  // A terminal without a width (some ptys) would make the spinner redraw endlessly: plain lines there.
  // discardStdin off: it puts the terminal in raw mode, where Ctrl-C raises no SIGINT.
  const animate = ctx.out.animated && ((ctx.stderr as { columns?: number }).columns ?? 0) > 0;
  const spinner = animate
    ? (await import('ora'))
        .default({ text: `${kind} task ${taskId}`, stream: ctx.stderr as NodeJS.WritableStream, discardStdin: false })
        .start()
    : undefined;
  const deadline = Date.now() + timeoutMs;
  let interval = 500;
  let last = '';
  let failures = 0;
  try {
    for (;;) {
      let answer: unknown;
      try {
        answer = await Promise.race([fetchStatus(client, kind, taskId), stopped]);
        failures = 0;
      } catch (error) {
        // A passing hiccup (the registry restarting, a provider's 5xx) does not end the wait.
        const transient =
          (error as Error).name === 'NetworkError' || ((error as { status?: number }).status ?? 0) >= 500;
        if (!transient || ++failures > 5) throw error;
        answer = undefined;
      }
      if (answer !== undefined) {
        const state = readState(kind, answer);
        if (state.status !== last) {
          last = state.status;
          if (spinner) spinner.text = printable(`${kind} task ${taskId}: ${state.status}`);
          else ctx.out.info(`${kind} task ${taskId}: ${state.status}`);
        }
        if (state.done) {
          if (spinner) state.failed ? spinner.fail() : spinner.succeed();
          return answer;
        }
      }
      if (Date.now() + interval > deadline) {
        throw new CliError(
          `${kind} task ${taskId} is still ${last || 'running'} after the --timeout`,
          EXIT.failure,
          'timeout',
          `it keeps running; follow it with: ${followHint(kind, taskId)}`,
        );
      }
      await Promise.race([new Promise((resolve) => setTimeout(resolve, interval)), stopped]);
      interval = Math.min(interval * 1.5, 5_000);
    }
  } finally {
    process.off('SIGINT', onSigint);
    if (spinner?.isSpinning) spinner.stop();
  }
}

// ---------- results ----------

/** A result server that sends nothing for this long is given up on (a download has no whole-answer timeout). */
const RESULT_IDLE_MS = 30_000;

/** `--output -`: the result's bytes on stdout, as other tools take `-`. */
const STDOUT = '-';

const EXTENSIONS: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'video/mp4': '.mp4',
  'video/webm': '.webm',
};

/**
 * Downloads results to `output`: a file when there is one result and `output` is not a directory
 * (nor ends with a separator), else files named after the task in that directory. Results are
 * capability URLs or the provider's: they are fetched without our token.
 */
export async function downloadResults(
  kind: TaskKind,
  state: TaskState,
  output: string,
  max = AI_RESULT_MAX,
  stdout?: NodeJS.WritableStream,
): Promise<string[]> {
  if (state.results.length === 0)
    throw new CliError(`${kind} task ${state.id} finished without results to download`, EXIT.failure, 'no_results');
  const toStdout = output === STDOUT;
  if (toStdout && state.results.length > 1) {
    throw invalidInput(
      `--output - writes one result to stdout; ${kind} task ${state.id} has ${state.results.length}`,
      `pass --output <dir>/: nodereg task status ${kind} ${state.id} --output results/`,
    );
  }
  const isDir =
    !toStdout &&
    (output.endsWith('/') ||
      output.endsWith(sep) ||
      state.results.length > 1 ||
      (await stat(output).catch(() => undefined))?.isDirectory());
  if (!toStdout) makeUserDir(isDir ? output : dirname(output), '--output');
  const files: string[] = [];
  for (const [index, url] of state.results.entries()) {
    let response: Answer;
    try {
      const { send } = await import('../client/http.js');
      response = await send({ method: 'GET', url, headers: { 'user-agent': 'nodereg' }, idleMs: RESULT_IDLE_MS });
    } catch (error) {
      throw new CliError(
        `cannot download ${url}: ${(error as { reason?: string }).reason ?? (error as Error).message}`,
        EXIT.failure,
        'network',
      );
    }
    if (response.status >= 300) {
      response.body.resume();
      throw new CliError(
        `cannot download ${url}: HTTP ${response.status}`,
        EXIT.failure,
        'download_failed',
        response.status === 404 ? 'results are kept for 24 hours' : undefined,
      );
    }
    const tooLarge = () =>
      new CliError(
        `cannot download ${url}: it is over ${max / 1024 / 1024} MiB, more than an AI result`,
        EXIT.failure,
        'download_failed',
      );
    if (Number(response.headers['content-length']) > max) {
      response.body.destroy();
      throw tooLarge();
    }
    if (toStdout) {
      // Our stdout is not ours to close: the bytes go through, the stream stays open.
      await pipeline(response.body, capped(max, tooLarge), stdout ?? process.stdout, { end: false });
      files.push(STDOUT);
      continue;
    }
    let target = output;
    if (isDir) {
      const type = response.headers['content-type']?.split(';')[0].trim() ?? '';
      const ext = EXTENSIONS[type] ?? (extname(new URL(url).pathname) || '.bin');
      // The task id comes from the registry: only a plain file name in `output` is made of it (no `../`).
      target = join(
        output,
        `${kind}-${state.id.replace(/[^\w.-]/g, '_')}${state.results.length > 1 ? `-${index + 1}` : ''}${ext}`,
      );
    }
    const partial = `${target}.part`;
    try {
      await pipeline(response.body, capped(max, tooLarge), createWriteStream(partial));
      await rename(partial, target);
    } catch (error) {
      await rm(partial, { force: true });
      if (error instanceof CliError) throw error;
      throw new CliError(
        `cannot save ${url} to ${target}: ${(error as Error).message}`,
        EXIT.failure,
        'download_failed',
      );
    }
    files.push(target);
  }
  return files;
}

/** A pipeline stage that passes at most `max` bytes and throws `tooLarge()` past that. */
function capped(max: number, tooLarge: () => Error) {
  return async function* (source: AsyncIterable<Buffer>) {
    let size = 0;
    for await (const chunk of source) {
      if ((size += chunk.length) > max) throw tooLarge();
      yield chunk;
    }
  };
}

/** The human lines of a task's state: its status, then its results. */
export function describeState(kind: TaskKind, state: TaskState): string {
  const credits = state.credits !== undefined ? ` (${state.credits} credits)` : '';
  const error = state.error ? `: ${state.error}` : '';
  return [
    `${kind} task ${state.id}: ${state.status}${credits}${error}`,
    ...state.results.map((url) => `  ${url}`),
  ].join('\n');
}

/**
 * After a submission or a poll: waits when asked (--wait, --output), downloads, and prints the
 * result. Without waiting, the task id is the result (stdout), with a hint on stderr.
 */
export async function finishTask(
  ctx: Ctx,
  client: Client,
  kind: TaskKind,
  answer: unknown,
  plan: WaitPlan,
  submitted: boolean,
): Promise<void> {
  let state = readState(kind, answer);
  if (!plan.wait) {
    if (submitted) {
      ctx.out.result(answer, state.id);
      ctx.out.hint(`follow it with: ${followHint(kind, state.id)}`);
    } else {
      ctx.out.result(answer, describeState(kind, state));
    }
    return;
  }
  if (submitted)
    ctx.out.info(`${kind} task ${state.id} started; waiting (Ctrl-C stops waiting, the task keeps running)`);
  if (!state.done) {
    answer = await waitForTask(ctx, client, kind, state.id, plan.timeoutMs);
    state = readState(kind, answer);
  }
  if (state.failed) {
    throw new CliError(
      `${kind} task ${state.id} failed${state.error ? `: ${state.error}` : ''}`,
      EXIT.failure,
      'task_failed',
    );
  }
  if (!plan.output) {
    ctx.out.result(answer, state.results.join('\n') || describeState(kind, state));
    return;
  }
  if (plan.output === STDOUT) {
    await downloadResults(kind, state, plan.output, AI_RESULT_MAX, ctx.stdout as NodeJS.WritableStream);
    ctx.out.success(`${kind} task ${state.id}: wrote the result to stdout`);
    return;
  }
  const files = await downloadResults(kind, state, plan.output);
  ctx.out.result({ ...(answer as object), files }, files.join('\n'));
  ctx.out.success(`saved ${files.length === 1 ? files[0] : `${files.length} files`}`);
}
