// The registry's Ed25519 key for provenance statements, derived from its secret (src/server/secrets.ts)
// like its other keys: every instance sharing a database signs with the same key, and none is stored.
import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { keyIdOf, preAuthEncoding, type Envelope } from '../../shared/dsse.js';

// The PKCS #8 DER of an Ed25519 private key, up to its 32-byte seed (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface SigningKey {
  keyid: string;
  publicKey: KeyObject;
  /** The public key as /.well-known/nodereg-keys publishes it: SPKI DER, base64. */
  publicSpki: string;
  /** A DSSE envelope of `payload`, signed with this key. */
  envelope(payloadType: string, payload: Buffer): Envelope;
}

export function signingKey(seed: Buffer): SigningKey {
  const privateKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed.subarray(0, 32)]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey);
  const keyid = keyIdOf(publicKey);
  return {
    keyid,
    publicKey,
    publicSpki: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    envelope: (payloadType, payload) => ({
      payloadType,
      payload: payload.toString('base64'),
      signatures: [{ keyid, sig: sign(null, preAuthEncoding(payloadType, payload), privateKey).toString('base64') }],
    }),
  };
}
