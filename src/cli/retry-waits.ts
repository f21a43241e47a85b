// What the user sees while the client waits to try a request again: a spinner on a terminal, and
// elsewhere (CI, a pipe) a line when the wait starts and one every 15 s, so a job log never goes quiet.
import type { RetryWait, WaitReport } from '../client/index.js';
import type { Output } from './output.js';

/** How often a wait off a terminal says it still goes on. */
export const WAIT_LINE_EVERY_MS = 15_000;
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A duration as people write it: 500ms, 45s, 2m, 1m30s. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const rest = seconds % 60;
  return `${Math.floor(seconds / 60)}m${rest ? `${rest}s` : ''}`;
}

const what = (w: RetryWait) => `${w.method} ${w.url} (${w.reason})`;

export function retryWaits(out: Output): WaitReport {
  const line = out.progress();
  let startedAt: number | undefined;
  let frame = 0;
  let ticker: NodeJS.Timeout | undefined;
  let current: RetryWait | undefined;
  const draw = () => {
    if (!current || startedAt === undefined) return;
    const elapsed = current.elapsedMs + (Date.now() - startedAt);
    line.update(
      `${FRAMES[frame++ % FRAMES.length]} waiting for ${what(current)}: ${durationText(Math.min(elapsed, current.windowMs))} of the ${durationText(current.windowMs)} retry window`,
      true,
    );
  };
  // Off a terminal, by the clock: a single wait can be long (a 429's Retry-After of a minute).
  const still = () => {
    if (!current || startedAt === undefined) return;
    const elapsed = Math.min(Date.now() - startedAt, current.windowMs);
    out.info(`still waiting for ${what(current)}: ${durationText(elapsed)} of ${durationText(current.windowMs)}`);
  };
  return {
    wait(info) {
      const first = startedAt === undefined;
      startedAt = Date.now() - info.elapsedMs;
      current = { ...info, elapsedMs: 0 };
      if (out.animated) {
        ticker ??= setInterval(draw, 100).unref();
        draw();
        return;
      }
      if (first) {
        out.info(`waiting for ${what(info)}, trying again for up to ${durationText(info.windowMs)} (the retry window)`);
        ticker ??= setInterval(still, WAIT_LINE_EVERY_MS).unref();
      }
    },
    end() {
      if (ticker) clearInterval(ticker);
      ticker = undefined;
      line.end();
      startedAt = undefined;
      current = undefined;
    },
  };
}
