import { hash, randomBytes } from 'node:crypto';
import { TOKEN_PREFIX, TOKEN_SHOWN_PREFIX } from '../../contract/limits.js';

export type TokenKind = keyof typeof TOKEN_PREFIX;

/** A new secret token: its readable prefix and 32 random bytes as base64url. Shown once, never stored. */
export function generateToken(kind: TokenKind): string {
  return TOKEN_PREFIX[kind] + randomBytes(32).toString('base64url');
}

/** What the store keeps instead of the token. */
export function hashToken(token: string): string {
  // one call, no Hash object: every request with a token hashes it to find its principal
  return hash('sha256', token, 'hex');
}

/** The leading characters shown in token lists, enough to tell tokens apart. */
export function shownPrefix(token: string): string {
  return token.slice(0, TOKEN_SHOWN_PREFIX);
}
