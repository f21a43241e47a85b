// Waiting for an AI task: polling with a spinner or status lines, until it is done, the --timeout, or Ctrl-C.
import type { Client } from '../client/index.js';
import { fetchStatus, followHint, readState, type TaskKind } from './ai-task-state.js';
import type { Ctx } from './context.js';
import { CliError, EXIT } from './errors.js';
import { printable } from './output.js';

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
