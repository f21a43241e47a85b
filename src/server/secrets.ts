import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ServerKeys {
  /** Signs upload URLs; never leaves the server. */
  upload: Buffer;
  /** Signs callbacks; also written as hex to DIR/callback-key for receivers to verify with. */
  callback: Buffer;
  /** Undefined without a data dir (a stateless instance writes nothing). */
  callbackKeyPath: string | undefined;
}

function localSecret(dataDir: string): Buffer {
  const secretPath = join(dataDir, 'secret');
  if (!existsSync(secretPath)) writeFileSync(secretPath, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  return Buffer.from(readFileSync(secretPath, 'utf8').trim(), 'hex');
}

/**
 * Derives the keys from `shared` (the database's secret, with PostgreSQL), else from DIR/secret (32
 * random bytes as hex, 0600), creating it on first start.
 */
export function loadKeys(dataDir: string | undefined, shared?: Buffer): ServerKeys {
  const secret = shared ?? localSecret(dataDir!);
  const derive = (label: string) => createHmac('sha256', secret).update(label).digest();
  const callback = derive('callback');
  if (dataDir === undefined) return { upload: derive('upload-url'), callback, callbackKeyPath: undefined };
  const callbackKeyPath = join(dataDir, 'callback-key');
  writeFileSync(callbackKeyPath, callback.toString('hex'), { mode: 0o600 });
  chmodSync(callbackKeyPath, 0o600);
  return { upload: derive('upload-url'), callback, callbackKeyPath };
}
