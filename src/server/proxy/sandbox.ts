// The offline sandbox: a task's state is a function of its creation time and the delay it was created
// with (so polls and callbacks survive a restart), and its result is made from the request itself.
// Nothing here fetches a URL.

/**
 * Which of `count` states a sandbox task is in at `now`: the delay is split evenly into count − 1
 * steps, the last state is reached at createdAt + delay and kept.
 */
export function sandboxStep(count: number, createdAt: number, delay: number, now: number): number {
  const steps = count - 1;
  if (delay <= 0) return steps;
  return Math.max(0, Math.min(steps, Math.floor(((now - createdAt) * steps) / delay)));
}

/** When the task reaches its next state, or undefined when it is in its last one. */
export function sandboxNextChange(count: number, createdAt: number, delay: number, now: number): number | undefined {
  const step = sandboxStep(count, createdAt, delay, now);
  if (step >= count - 1) return undefined;
  return createdAt + Math.ceil((delay * (step + 1)) / (count - 1));
}

/** What a sandbox result is made of: the URL given, or bytes decoded from base64; or why it fails. */
export type SandboxSource =
  | { kind: 'url'; url: string }
  | { kind: 'bytes'; bytes: Buffer; contentType: string; ext: string }
  | { kind: 'invalid'; reason: string };

const BASE64 = /^[A-Za-z0-9+/\-_]+={0,2}$/;

/** Reads an image or video field as the sandbox judges it: an http(s) URL, a base64 data URL, or base64. */
export function readSource(value: string, what: 'image' | 'video'): SandboxSource {
  const text = value.trim();
  if (/^https?:\/\//i.test(text)) {
    try {
      return { kind: 'url', url: new URL(text).href };
    } catch {
      return { kind: 'invalid', reason: `the ${what} URL is not valid` };
    }
  }
  const dataUrl = /^data:[^,]*;base64,(.*)$/is.exec(text);
  const base64 = (dataUrl ? dataUrl[1] : text).replace(/\s+/g, '');
  if (!BASE64.test(base64)) {
    return { kind: 'invalid', reason: `the ${what} is neither base64 content nor an http(s) URL` };
  }
  const bytes = Buffer.from(base64, base64.includes('-') || base64.includes('_') ? 'base64url' : 'base64');
  if (bytes.length === 0) return { kind: 'invalid', reason: `the ${what} decodes to nothing` };
  return { kind: 'bytes', bytes, ...sniff(bytes) };
}

/** The media type of some bytes, from their first bytes; anything unknown is served as octet-stream. */
export function sniff(bytes: Buffer): { contentType: string; ext: string } {
  const starts = (hex: string, at = 0) => bytes.subarray(at, at + hex.length / 2).equals(Buffer.from(hex, 'hex'));
  if (starts('89504e470d0a1a0a')) return { contentType: 'image/png', ext: '.png' };
  if (starts('ffd8ff')) return { contentType: 'image/jpeg', ext: '.jpg' };
  if (starts('474946383761') || starts('474946383961')) return { contentType: 'image/gif', ext: '.gif' };
  if (starts('52494646') && starts('57454250', 8)) return { contentType: 'image/webp', ext: '.webp' };
  if (starts('66747970', 4)) return { contentType: 'video/mp4', ext: '.mp4' };
  if (starts('1a45dfa3')) return { contentType: 'video/webm', ext: '.webm' };
  return { contentType: 'application/octet-stream', ext: '.bin' };
}

/** A tiny MP4 container (an `ftyp` box and a `free` box naming the task): the video result when none was given. */
export function placeholderVideo(taskId: string): Buffer {
  const box = (type: string, payload: Buffer) => {
    const header = Buffer.alloc(8);
    header.writeUInt32BE(8 + payload.length, 0);
    header.write(type, 4, 'latin1');
    return Buffer.concat([header, payload]);
  };
  const ftyp = box(
    'ftyp',
    Buffer.concat([Buffer.from('isom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2mp41')]),
  );
  return Buffer.concat([ftyp, box('free', Buffer.from(`nodereg sandbox placeholder for video task ${taskId}`))]);
}
