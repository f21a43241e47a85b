// How many uploads may be in progress at once, per version and per publisher, and the least transfer
// rate of an upload's body: a flood of slow uploads on one signed URL holds a few descriptors, not all
// of them, and another publisher's upload goes through meanwhile.
import type { Readable } from 'node:stream';
import { type Refusal, uploadsOfPublisherBusy, uploadsOfVersionBusy, uploadTooSlow } from '../../contract/errors.js';
import { HttpError } from '../errors.js';

export interface UploadLimits {
  /** Uploads of one version in progress at once (a second one may race the first; one stores). Default 2. */
  perVersion?: number;
  /** Uploads of one publisher's versions in progress at once. Default 10. */
  perPublisher?: number;
  /** Bytes a second an upload's body must arrive at, measured over each `graceMs`; 0 for none. Default 1 KiB. */
  minRate?: number;
  /** The time an upload has before its rate is first measured, and the window it is measured over (ms). Default 30 s. */
  graceMs?: number;
}

export const DEFAULT_UPLOAD_LIMITS: Required<UploadLimits> = {
  perVersion: 2,
  perPublisher: 10,
  minRate: 1024,
  graceMs: 30_000,
};

export const refusalError = (refusal: Refusal) =>
  new HttpError(
    refusal.code,
    refusal.message,
    undefined,
    refusal.hint,
    refusal.retryAfter === undefined ? undefined : { 'Retry-After': String(refusal.retryAfter) },
  );

export interface UploadSlots {
  /** Takes a place for an upload of the version, or throws its 409 (version) or 429 (publisher); returns its release. */
  take(target: { versionId: string; nodeId: string; version: string; publisherId: string }): () => void;
  /** Uploads in progress. */
  inFlight(): number;
}

export function createUploadSlots(limits: UploadLimits = {}): UploadSlots {
  const { perVersion, perPublisher } = { ...DEFAULT_UPLOAD_LIMITS, ...limits };
  const versions = new Map<string, number>();
  const publishers = new Map<string, number>();
  let inFlight = 0;
  const add = (counts: Map<string, number>, key: string, by: number) => {
    const count = (counts.get(key) ?? 0) + by;
    if (count) counts.set(key, count);
    else counts.delete(key);
  };
  return {
    take({ versionId, nodeId, version, publisherId }) {
      if ((versions.get(versionId) ?? 0) >= perVersion)
        throw refusalError(uploadsOfVersionBusy(nodeId, version, perVersion));
      if ((publishers.get(publisherId) ?? 0) >= perPublisher)
        throw refusalError(uploadsOfPublisherBusy(publisherId, perPublisher));
      add(versions, versionId, 1);
      add(publishers, publisherId, 1);
      inFlight++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        add(versions, versionId, -1);
        add(publishers, publisherId, -1);
        inFlight--;
      };
    },
    inFlight: () => inFlight,
  };
}

/**
 * Watches the body's bytes arriving on its connection: when fewer than `minRate` a second came in a
 * window of `graceMs` (the first one included), `signal` aborts with the 408 to answer.
 */
export function rateWatch(body: Readable, limits: UploadLimits = {}): { signal: AbortSignal; stop(): void } {
  const { minRate, graceMs } = { ...DEFAULT_UPLOAD_LIMITS, ...limits };
  const controller = new AbortController();
  const socket = (body as { socket?: { bytesRead: number } }).socket;
  if (!socket || !minRate) return { signal: controller.signal, stop: () => {} };
  let seen = socket.bytesRead;
  const timer = setInterval(() => {
    // The whole body arrived: what is left (the file written) is not the client's to hurry.
    if (body.readableEnded) return clearInterval(timer);
    const now = socket.bytesRead;
    if (now - seen < (minRate * graceMs) / 1000) {
      clearInterval(timer);
      controller.abort(refusalError(uploadTooSlow(minRate, graceMs)));
    }
    seen = now;
  }, graceMs);
  timer.unref();
  return { signal: controller.signal, stop: () => clearInterval(timer) };
}
