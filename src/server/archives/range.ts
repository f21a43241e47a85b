import type { ByteRange } from './storage.js';

/**
 * The one byte range a `Range` header asks of `size` bytes (`bytes=a-b`, `bytes=a-`, `bytes=-n`), or
 * undefined to send the whole archive: no header, several ranges, or one that cannot be satisfied.
 * (A server may always answer a Range request in full, RFC 9110 §14.2; clients then take the 200.)
 */
export function requestedRange(header: string | undefined, size: number): ByteRange | undefined {
  const match = header?.trim().match(/^bytes=(\d{0,15})-(\d{0,15})$/i);
  if (!match || size === 0 || (match[1] === '' && match[2] === '')) return undefined;
  const [first, last] = [match[1], match[2]];
  const range =
    first === ''
      ? { start: Math.max(0, size - Number(last)), end: size - 1 }
      : { start: Number(first), end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
  return range.start <= range.end && range.start < size && !(first === '' && Number(last) === 0) ? range : undefined;
}
