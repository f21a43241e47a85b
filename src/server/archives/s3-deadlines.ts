// Deadlines on every call to S3 (DESIGN.md §16): a bucket that accepts connections and never answers
// (a frozen server, a black-holed route) fails each call within a bound, retries included, so /readyz
// and downloads answer 503 in time, and no request waits on S3 forever.
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StorageUnavailableError } from './storage.js';

/**
 * connectionTimeout: to open a connection. socketTimeout: silence within one request's exchange.
 * answerTimeout: a whole call (a HEAD, GET or DELETE until its answer begins), the SDK's retries
 * included. readyTimeout: the check of /readyz, within its documented 5 s. bodyIdleTimeout: an
 * object's body that stops coming while the download waits for it (not while the client reads slowly).
 * An upload's PUT has no whole-call bound (its size decides); its connection and silence are bounded.
 */
export const S3_TIMEOUTS = {
  connectionTimeout: 5_000,
  socketTimeout: 10_000,
  answerTimeout: 10_000,
  readyTimeout: 4_000,
  bodyIdleTimeout: 30_000,
};
export type S3Timeouts = typeof S3_TIMEOUTS;

/** `call` given a signal that aborts it after `ms`; past `ms` it fails as the storage unavailable, whatever the call does. */
export async function within<T>(ms: number, what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new StorageUnavailableError(`the S3 server did not answer ${what} within ${ms / 1000} s`);
      controller.abort(error);
      reject(error);
    }, ms);
  });
  try {
    return await Promise.race([call(controller.signal), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The body of an object, failed (StorageUnavailableError) when S3 sends nothing for `ms` while the
 * reader waits for bytes: nothing is buffered for it. A reader that is behind (bytes wait in the
 * buffers) is never cut, however slowly it reads.
 */
export function idleBounded(body: Readable, ms: number, what: string): Readable {
  let last = Date.now();
  const watched = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      last = Date.now();
      done(null, chunk);
    },
  });
  const check = setInterval(
    () => {
      const starved = watched.readableLength === 0 && watched.writableLength === 0;
      if (starved && Date.now() - last >= ms)
        watched.destroy(new StorageUnavailableError(`the S3 server sent nothing of ${what} for ${ms / 1000} s`));
    },
    Math.max(10, Math.min(1000, ms / 4)),
  );
  check.unref();
  const stop = () => clearInterval(check);
  watched.once('close', stop);
  pipeline(body, watched).catch(() => {}); // an error of either ends both; the reader sees it on `watched`
  return watched;
}
