import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createOnce } from './data-dir.js';

export interface ServerKeys {
  /** Signs upload URLs; never leaves the server. */
  upload: Buffer;
  /** Signs callbacks; also written as hex to DIR/callback-key for receivers to verify with. */
  callback: Buffer;
  /** Undefined without a data dir (a stateless instance writes nothing). */
  callbackKeyPath: string | undefined;
  /** The seed of the Ed25519 key provenance statements are signed with (trusted/signing-key.ts). */
  provenance: Buffer;
}

function localSecret(dataDir: string): Buffer {
  const secretPath = join(dataDir, 'secret');
  const text = createOnce(secretPath, randomBytes(32).toString('hex'));
  // An empty or cut secret (Buffer.from stops at the first non-hex digit) is a key anyone can compute.
  if (!/^(?:[0-9a-fA-F]{2}){32,}$/.test(text)) {
    throw new Error(
      `${secretPath} does not hold a secret (64 hex digits): upload URLs signed with it could be forged; restore it from a backup of this data dir, or write a new one with \`openssl rand -hex 32 > ${secretPath}\` (upload URLs handed out and the callback key change)`,
    );
  }
  return Buffer.from(text, 'hex');
}

/**
 * Derives the keys from `shared` (the database's secret, with PostgreSQL), else from DIR/secret (32
 * random bytes as hex, 0600), creating it on first start.
 */
export function loadKeys(dataDir: string | undefined, shared?: Buffer): ServerKeys {
  const secret = shared ?? localSecret(dataDir!);
  const derive = (label: string) => createHmac('sha256', secret).update(label).digest();
  const callback = derive('callback');
  const provenance = derive('provenance-ed25519');
  if (dataDir === undefined) return { upload: derive('upload-url'), callback, callbackKeyPath: undefined, provenance };
  const callbackKeyPath = join(dataDir, 'callback-key');
  writeFileSync(callbackKeyPath, callback.toString('hex'), { mode: 0o600 });
  chmodSync(callbackKeyPath, 0o600);
  return { upload: derive('upload-url'), callback, callbackKeyPath, provenance };
}
