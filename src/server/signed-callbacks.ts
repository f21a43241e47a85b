// Signed callbacks: the AI proxy's to webhook_url / callback_url (DESIGN.md §4) and the publishers'
// webhooks (webhooks/deliveries.ts), one signing and one way of sending for both.
import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { CALLBACK_HEADERS } from '../contract/limits.js';

/**
 * `sha256=HEX`: HMAC-SHA256 of the raw body with the key (the AI callbacks': DIR/callback-key, as hex;
 * a webhook's: its secret).
 */
export function signCallback(key: Buffer, body: string): string {
  return `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
}

export type DeliveryOutcome = { ok: true } | { ok: false; error: string };

/**
 * POSTs one callback. Any 2xx is success; anything else, a redirect, or no answer within
 * `timeoutMs` is a failure to retry. Never throws. `lookup` resolves the host for the connection
 * itself, so an address check made there (webhooks/targets.ts) holds for the address connected to.
 */
export async function sendCallback(input: {
  url: string;
  /** The X-Nodereg-Event header: what happened. */
  event: string;
  body: string;
  deliveryId: string;
  key: Buffer;
  timeoutMs: number;
  userAgent: string;
  closing: AbortSignal;
  lookup?: LookupFunction;
}): Promise<DeliveryOutcome> {
  const timeout = AbortSignal.timeout(input.timeoutMs);
  try {
    const status = await post(input, AbortSignal.any([timeout, input.closing]));
    if (status >= 200 && status < 300) return { ok: true };
    return { ok: false, error: `HTTP ${status}` };
  } catch (error) {
    if (timeout.aborted) return { ok: false, error: `no answer within ${input.timeoutMs} ms` };
    return { ok: false, error: (error as { code?: string }).code ?? (error as Error).message };
  }
}

/** The POST itself: its answer's status, once the answer's body was read and dropped. */
function post(input: Parameters<typeof sendCallback>[0], signal: AbortSignal): Promise<number> {
  const url = new URL(input.url);
  // a user and password in the URL go as Basic authentication, as curl sends them
  const credentials =
    url.username || url.password
      ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
      : undefined;
  const headers = {
    ...(credentials !== undefined && { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` }),
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(input.body)),
    'user-agent': input.userAgent,
    [CALLBACK_HEADERS.event]: input.event,
    [CALLBACK_HEADERS.delivery]: input.deliveryId,
    [CALLBACK_HEADERS.signature]: signCallback(input.key, input.body),
  };
  url.username = url.password = '';
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    // a redirect is not followed (it could lead anywhere, past the address check): its status is a failure
    const request = send(
      url,
      { method: 'POST', headers, signal, ...(input.lookup && { lookup: input.lookup }), agent: false },
      (response) => {
        response.resume();
        response.once('end', () => resolve(response.statusCode ?? 0));
        response.once('error', reject);
      },
    );
    request.once('error', reject);
    request.end(input.body);
  });
}
