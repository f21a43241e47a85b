import { createHmac, timingSafeEqual } from 'node:crypto';
import { isUploadQueryForm } from '../../contract/upload.js';
import { UPLOAD_URL_TTL_SECONDS } from '../../shared/tuning.js';

// Signed upload URLs (DESIGN.md §3): HMAC-SHA256 with the upload key over the method, the route path
// and the expiry, and over the archive's size and SHA-256 when the publish declared them (the URL
// then takes that archive only), and over the id of the token that published (the upload is refused
// once that token is revoked or its user has left the publisher). The path signed is the route's (`/uploads/{versionId}`), never the
// public-url prefix, so a server behind a proxy that rewrites its prefix still verifies its own URLs.

/** The archive a publish declared, as it stands in the URL's query. */
export interface DeclaredArchive {
  size: string;
  sha256: string;
}

const uploadPath = (versionId: string) => `/uploads/${versionId}`;

function sign(key: Buffer, versionId: string, expires: string, declared?: DeclaredArchive, tokenId?: string): string {
  const signed = [
    'PUT',
    uploadPath(versionId),
    expires,
    ...(declared ? [declared.size, declared.sha256] : []),
    ...(tokenId !== undefined ? [`token_id=${tokenId}`] : []),
  ];
  return createHmac('sha256', key).update(signed.join('\n')).digest('hex');
}

/**
 * `{publicUrl}/uploads/{versionId}?expires=UNIX[&size=N&sha256=HEX][&token_id=ID]&signature=HEX`, valid
 * UPLOAD_URL_TTL_SECONDS from `now`.
 */
export function signUploadUrl(
  key: Buffer,
  publicUrl: string,
  versionId: string,
  now = Date.now(),
  declared?: { size: number; sha256: string },
  tokenId?: string,
): string {
  const expires = String(Math.floor(now / 1000) + UPLOAD_URL_TTL_SECONDS);
  const base = publicUrl.replace(/\/+$/, '');
  const archive = declared ? { size: String(declared.size), sha256: declared.sha256 } : undefined;
  const query =
    (archive ? `expires=${expires}&size=${archive.size}&sha256=${archive.sha256}` : `expires=${expires}`) +
    (tokenId !== undefined ? `&token_id=${encodeURIComponent(tokenId)}` : '');
  return `${base}/uploads/${encodeURIComponent(versionId)}?${query}&signature=${sign(key, versionId, expires, archive, tokenId)}`;
}

/**
 * Checks a signed upload URL's query when the request starts. A signature made for another version,
 * or for another declared archive, is invalid.
 */
export function verifyUploadSignature(
  key: Buffer,
  versionId: string,
  expires: string,
  signature: string,
  now = Date.now(),
  declared?: DeclaredArchive,
  tokenId?: string,
): 'ok' | 'expired' | 'invalid' {
  if (!isUploadQueryForm(expires, signature)) return 'invalid';
  // The signed fields are joined by newlines: one inside a field could pass for another field.
  if ([declared?.size, declared?.sha256, tokenId].some((field) => field?.includes('\n'))) return 'invalid';
  const expected = Buffer.from(sign(key, versionId, expires, declared, tokenId), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'invalid';
  return Number(expires) * 1000 > now ? 'ok' : 'expired';
}
