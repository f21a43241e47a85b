// Signed callbacks: the AI proxy's to webhook_url / callback_url (DESIGN.md §4) and the publishers'
// webhooks (webhooks/deliveries.ts), one signing and one way of sending for both.
import { createHmac } from 'node:crypto';
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
 * `timeoutMs` is a failure to retry. Never throws.
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
}): Promise<DeliveryOutcome> {
  const timeout = AbortSignal.timeout(input.timeoutMs);
  try {
    // fetch refuses a URL that holds a user and password: they go as Basic authentication, as curl sends them.
    const url = new URL(input.url);
    const credentials =
      url.username || url.password
        ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
        : undefined;
    url.username = url.password = '';
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        ...(credentials !== undefined && { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` }),
        'content-type': 'application/json',
        'user-agent': input.userAgent,
        [CALLBACK_HEADERS.event]: input.event,
        [CALLBACK_HEADERS.delivery]: input.deliveryId,
        [CALLBACK_HEADERS.signature]: signCallback(input.key, input.body),
      },
      body: input.body,
      // a redirect could lead anywhere, past the allow-list: it counts as a failure
      redirect: 'manual',
      signal: AbortSignal.any([timeout, input.closing]),
    });
    await response.body?.cancel().catch(() => {});
    if (response.status >= 200 && response.status < 300) return { ok: true };
    return { ok: false, error: `HTTP ${response.status}` };
  } catch (error) {
    if (timeout.aborted) return { ok: false, error: `no answer within ${input.timeoutMs} ms` };
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    return { ok: false, error: String(cause) };
  }
}
