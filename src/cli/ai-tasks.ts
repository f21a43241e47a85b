// What the AI proxy commands share (relight, skin-enhance, video-extend, task status): reading
// images and videos, validating before sending, then waiting and downloading (ai-task-wait.ts,
// ai-results.ts). Loads no zod and no HTTP client at import: help stays fast.
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import type { Client } from '../client/index.js';
import { JSON_BODY_MAX } from '../contract/limits.js';
import type { BodyOf, Operation } from '../contract/operation.js';
import { checkRequestPart, type OperationId } from '../contract/operation-checks.js';
import type { Route } from '../client/routes.js';
import { downloadResults, STDOUT } from './ai-results.js';
import { describeState, followHint, readState, type TaskKind } from './ai-task-state.js';
import { waitForTask } from './ai-task-wait.js';
import type { Ctx } from './context.js';
import { parseDuration } from './duration.js';
import { CliError, EXIT, fileProblem, flagForField, invalidInput } from './errors.js';

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
 * Checks a body with the operation's generated check before anything is sent: exit 2 naming the
 * option to fix and the body's first problem, in the server's words. `flags` names options that differ
 * from the field's kebab-case (`image` → `<image>`).
 */
export async function validateBody<O extends Operation>(
  route: Route<O>,
  body: unknown,
  flags: Record<string, string> = {},
): Promise<BodyOf<O>> {
  const checked = await checkRequestPart(route.id as OperationId, 'body', body);
  // what the check outputs (its defaults filled in) is what is sent, and it meets the schema's input
  if (!('refusal' in checked)) return checked.value as BodyOf<O>;
  const { path, message } = checked.refusal;
  const fieldPath = path === '(root)' ? '' : path;
  const field = fieldPath
    .split('.')
    .filter((part) => part !== '' && !/^\d+$/.test(part))
    .pop();
  const flag = (field && flags[field]) ?? flagForField(fieldPath);
  throw invalidInput(`invalid ${flag} (${fieldPath || 'body'}): ${message}`);
}

/** Drops undefined fields, so the contract's defaults apply to what the user did not give. */
export function defined<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as Partial<T>;
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
  const stdout = ctx.stdout as NodeJS.WritableStream;
  if (plan.output === STDOUT) {
    await downloadResults(kind, state, plan.output, stdout);
    ctx.out.success(`${kind} task ${state.id}: wrote the result to stdout`);
    return;
  }
  const files = await downloadResults(kind, state, plan.output, stdout);
  ctx.out.result({ ...(answer as object), files }, files.join('\n'));
  ctx.out.success(`saved ${files.length === 1 ? files[0] : `${files.length} files`}`);
}
