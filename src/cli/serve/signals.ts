import type { RegistryServer } from '../../server/index.js';
import { CLOSE_MAX_MS, CLOSE_STALLED_MS } from '../../shared/tuning.js';

/**
 * Runs until SIGINT or SIGTERM, then lets in-flight requests finish (the stalled ones are cut, and all
 * within CLOSE_MAX_MS) and closes the database. The handlers stay installed until the server is closed:
 * a module that re-raises signals (conf's write-file helper does) must not end the process halfway
 * through closing.
 */
export function closeOnSignal(server: RegistryServer, info: (line: string) => void): Promise<void> {
  return new Promise((resolveClosed, rejectClosed) => {
    let closing = false;
    const stop = (signal: NodeJS.Signals) => {
      if (closing) return;
      closing = true;
      info(
        `${signal}: closing (in-flight requests finish first; one whose connection moves nothing for ${CLOSE_STALLED_MS / 1000} s is cut, every one left after ${CLOSE_MAX_MS / 1000} s; SIGKILL stops at once)`,
      );
      server.close().then(
        () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          info('closed');
          resolveClosed();
        },
        (error: unknown) => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          rejectClosed(error);
        },
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
