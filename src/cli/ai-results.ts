// Downloading an AI task's results to a file, a directory or stdout, capped at an AI result's size.
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { dirname, extname, join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Answer } from '../client/http.js';
import { AI_RESULT_MAX } from '../shared/tuning.js';
import type { TaskKind, TaskState } from './ai-task-state.js';
import { CliError, EXIT, invalidInput } from './errors.js';
import { makeUserDir } from './make-dir.js';

/** A result server that sends nothing for this long is given up on (a download has no whole-answer timeout). */
const RESULT_IDLE_MS = 30_000;

/** `--output -`: the result's bytes on stdout, as other tools take `-`. */
export const STDOUT = '-';

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
  /** The run's stdout (`--output -`). */
  stdout: NodeJS.WritableStream,
  max = AI_RESULT_MAX,
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
      await pipeline(response.body, capped(max, tooLarge), stdout, { end: false });
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
