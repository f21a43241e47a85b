// DSSE envelopes (the in-toto signing format): the signature covers the pre-authentication encoding of
// the payload type and the payload's exact bytes, so any change to the statement breaks it. The
// registry signs with Ed25519; `nodereg verify` checks with the public key at /.well-known/nodereg-keys.
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';

export interface Envelope {
  payloadType: string;
  /** The statement's bytes, base64. */
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

/** PAE(type, body) = "DSSEv1" SP len(type) SP type SP len(body) SP body, lengths in bytes as decimal. */
export function preAuthEncoding(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

/** A public key's id: the SHA-256 of its SPKI DER, as hex. */
export const keyIdOf = (publicKey: KeyObject): string =>
  createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex');

/** An Ed25519 public key from its SPKI DER as base64 (the form /.well-known/nodereg-keys publishes). */
export const publicKeyFrom = (spkiBase64: string): KeyObject =>
  createPublicKey({ key: Buffer.from(spkiBase64, 'base64'), format: 'der', type: 'spki' });

/**
 * The statement's bytes when one of the envelope's signatures is by a key in `keys` (by key id) and
 * checks over the PAE of its payload; else why not.
 */
export function openEnvelope(
  envelope: Envelope,
  keys: ReadonlyMap<string, KeyObject>,
): { payload: Buffer } | { problem: string } {
  const payload = Buffer.from(envelope.payload, 'base64');
  const signed = preAuthEncoding(envelope.payloadType, payload);
  const known = envelope.signatures.filter((s) => keys.has(s.keyid));
  if (known.length === 0)
    return {
      problem: `the statement is signed by key ${envelope.signatures[0]?.keyid ?? '(none)'}, not one of the registry's keys`,
    };
  for (const s of known) {
    if (verify(null, signed, keys.get(s.keyid)!, Buffer.from(s.sig, 'base64'))) return { payload };
  }
  return { problem: "the statement's signature does not match it: it was changed after the registry signed it" };
}
