// The archive PUT, streamed with backpressure over node:http (Node 20's fetch kept a streamed request
// body in memory: a 150 MB upload raised the RSS by ~170 MB; node:http by ~40 MB of garbage). It
// sends only the headers the upload needs: never the token, since a signed URL carries its own
// authority and may point at another host.
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { NetworkError } from './errors.js';
import { readText, transport, withoutQuery } from './http.js';

export interface PutInput {
  body: ReadableStream<Uint8Array> | NodeJS.ReadableStream;
  headers: Record<string, string>;
  onProgress?: (sentBytes: number) => void;
  /** Aborting stops the upload at once: the request is destroyed and the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Gives up (NetworkError) when the body makes no progress for this long: a stalled connection. */
  idleMs: number;
  /** Gives up (NetworkError) when no answer has come this long after the last byte (the registry checks and scans first). */
  answerMs: number;
}

export interface PutResult {
  status: number;
  statusText: string;
  retryAfter?: string;
  text: string;
}

/** PUTs a stream with backpressure; resolves with the response, whatever its status. */
export async function putStream(url: string, input: PutInput): Promise<PutResult> {
  const target = new URL(url);
  const shown = withoutQuery(url);
  const lib = await transport(target);
  return new Promise((resolve, reject) => {
    let responded = false;
    let failure: Error | undefined;
    const request = lib.request(target, { method: 'PUT', headers: input.headers });
    request.on('response', (response) => {
      responded = true;
      readText(response).then(
        (text) =>
          resolve({
            status: response.statusCode ?? 0,
            statusText: response.statusMessage ?? '',
            retryAfter: response.headers['retry-after'],
            text,
          }),
        (error: Error) =>
          reject(
            error instanceof NetworkError
              ? new NetworkError(shown, error.reason, error.transient)
              : new NetworkError(shown, error.message),
          ),
      );
    });
    request.on(
      'error',
      (error: NodeJS.ErrnoException) => (failure ??= new NetworkError(shown, error.code ?? error.message)),
    );
    // A server may answer early (403, 413) and close while the body is still going: its answer wins.
    request.on('close', () => {
      if (!responded) reject(failure ?? new NetworkError(shown, 'the connection closed before an answer'));
    });
    // A stalled connection (a proxy or registry that stops reading or answering) must not hold a CI job
    // forever; there is no overall timeout, since a large archive on a slow link takes what it takes.
    let bodySent = false;
    request.setTimeout(input.idleMs, () => {
      // no answer after the whole body is final: the registry may still be checking it
      failure ??= bodySent
        ? new NetworkError(shown, `no answer ${input.answerMs / 1000} s after the upload`, false)
        : new NetworkError(shown, `the upload stalled: nothing sent for ${input.idleMs / 1000} s`);
      request.destroy();
    });
    let sent = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        sent += chunk.length;
        input.onProgress?.(sent);
        callback(null, chunk);
      },
    });
    const body =
      'getReader' in input.body
        ? Readable.fromWeb(input.body as WebReadableStream<Uint8Array>)
        : (input.body as NodeJS.ReadableStream);
    const abort = () => {
      responded = true; // nothing more to wait for
      request.destroy();
      reject(input.signal!.reason);
    };
    if (input.signal?.aborted) return abort();
    input.signal?.addEventListener('abort', abort, { once: true });
    request.on('close', () => input.signal?.removeEventListener('abort', abort));
    pipeline(body, counter, request)
      .then(() => {
        bodySent = true;
        request.setTimeout(input.answerMs);
      })
      .catch((error: NodeJS.ErrnoException) => {
        failure ??= new NetworkError(shown, error.code ?? error.message);
        request.destroy();
      });
  });
}
