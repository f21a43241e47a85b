import { createHmac, timingSafeEqual } from 'node:crypto';
import { UPLOAD_URL_TTL_SECONDS } from '../../contract/limits.js';

// Signed upload URLs (DESIGN.md §3): HMAC-SHA256 with the upload key over the method, the route path
// and the expiry. The path signed is the route's (`/uploads/{versionId}`), never the public-url
// prefix, so a server behind a proxy that rewrites its prefix still verifies its own URLs.

const uploadPath = (versionId: string) => `/uploads/${versionId}`;

function sign(key: Buffer, versionId: string, expires: string): string {
  return createHmac('sha256', key).update(`PUT\n${uploadPath(versionId)}\n${expires}`).digest('hex');
}

/** `{publicUrl}/uploads/{versionId}?expires=UNIX&signature=HEX`, valid UPLOAD_URL_TTL_SECONDS from `now`. */
export function signUploadUrl(key: Buffer, publicUrl: string, versionId: string, now = Date.now()): string {
  const expires = String(Math.floor(now / 1000) + UPLOAD_URL_TTL_SECONDS);
  const base = publicUrl.replace(/\/+$/, '');
  return `${base}/uploads/${encodeURIComponent(versionId)}?expires=${expires}&signature=${sign(key, versionId, expires)}`;
}

/** Checks a signed upload URL's query when the request starts. A signature made for another version is invalid. */
export function verifyUploadSignature(
  key: Buffer,
  versionId: string,
  expires: string,
  signature: string,
  now = Date.now(),
): 'ok' | 'expired' | 'invalid' {
  if (!/^\d{1,15}$/.test(expires) || !/^[0-9a-fA-F]{64}$/.test(signature)) return 'invalid';
  const expected = Buffer.from(sign(key, versionId, expires), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'invalid';
  return Number(expires) * 1000 > now ? 'ok' : 'expired';
}
