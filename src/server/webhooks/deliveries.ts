// Webhook deliveries (issue 36): each event of a publisher's version goes to its webhooks as a signed
// POST (signed-callbacks.ts, as the AI callbacks are), retried with backoff a bounded number of times.
// Everything is bounded (queue, body, time per attempt) and kept in this process's memory: an event
// is never waited for by the publish or status change that made it, and a full queue drops it.
import { randomUUID } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import type { WebhookEvent, WebhookPayload } from '../../contract/webhooks.js';
import { withoutUrlSecrets } from '../../shared/url.js';
import { sendCallback } from '../signed-callbacks.js';
import type { WebhookRow, WebhookStore } from '../store/webhooks.js';
import { deliveryLookup, refusedTarget } from './targets.js';

export interface WebhookOptions {
  /** Deliver to loopback and private addresses (`serve --webhook-allow-private`); default false. */
  allowPrivate?: boolean;
  /** How long one attempt may take, in ms (default 10 s). */
  timeoutMs?: number;
  /** The wait before the first retry, in ms, doubled for each next one (default 5 s). */
  backoffMs?: number;
  /** How receivers' host names are resolved (default: the system's); the tests' own resolver. */
  resolve?: LookupFunction;
}

export const WEBHOOK_LIMITS = {
  /** Attempts per delivery, the first included. */
  attempts: 3,
  /** Deliveries waiting or retrying, all webhooks together: past it an event is dropped (and logged). */
  queue: 1000,
  /** Deliveries sent at once. */
  concurrency: 4,
  /** The largest body sent, in bytes. */
  bodyMax: 16 * 1024,
} as const;

export type WebhookEventInput = Omit<WebhookPayload, 'at' | 'publisher_id'> & { event: WebhookEvent };

export interface WebhookDispatcher {
  /** Queues the event for the publisher's webhooks that take it; returns at once and never throws. */
  emit(publisherId: string, event: WebhookEventInput): void;
  /** Stops sending and retrying; resolves once the attempts in flight ended. */
  close(): Promise<void>;
}

interface Delivery {
  id: string;
  hook: WebhookRow;
  event: WebhookEvent;
  body: string;
  attempts: number;
}

/** One attempt: the delivery POSTed, signed with its webhook's secret. */
const post = (
  delivery: Delivery,
  how: { timeoutMs: number; userAgent: string; closing: AbortSignal; lookup: LookupFunction },
) =>
  sendCallback({
    url: delivery.hook.url,
    event: delivery.event,
    body: delivery.body,
    deliveryId: delivery.id,
    key: Buffer.from(delivery.hook.secret, 'utf8'),
    ...how,
  });

export function createWebhookDispatcher(deps: {
  store: WebhookStore;
  log: (line: string, level?: 'warn' | 'error') => void;
  userAgent: string;
  options?: WebhookOptions;
}): WebhookDispatcher {
  const { allowPrivate = false, timeoutMs = 10_000, backoffMs = 5000, resolve } = deps.options ?? {};
  const lookup = deliveryLookup(allowPrivate, resolve);
  const queue: Delivery[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const inflight = new Set<Promise<void>>();
  const closing = new AbortController();
  let held = 0; // queued, sending or waiting to retry
  let dropped = 0;

  const hold = (delivery: Delivery) => {
    if (held >= WEBHOOK_LIMITS.queue) {
      // one line for the first drop and each thousandth: a receiver that is down must not flood the log
      if (dropped++ % 1000 === 0)
        deps.log(`webhooks: the queue is full (${WEBHOOK_LIMITS.queue}); ${dropped} deliveries dropped so far`, 'warn');
      return;
    }
    held++;
    queue.push(delivery);
    pump();
  };

  function pump() {
    while (inflight.size < WEBHOOK_LIMITS.concurrency && queue.length && !closing.signal.aborted) {
      const attempt = send(queue.shift()!).catch((error) => deps.log(`webhooks: ${(error as Error).message}`, 'error'));
      inflight.add(attempt);
      void attempt.finally(() => {
        inflight.delete(attempt);
        pump();
      });
    }
  }

  async function send(delivery: Delivery): Promise<void> {
    const { hook } = delivery;
    const refused = refusedTarget(hook.url, allowPrivate);
    const outcome = refused
      ? { ok: false as const, error: refused }
      : await post(delivery, { timeoutMs, userAgent: deps.userAgent, closing: closing.signal, lookup });
    delivery.attempts++;
    if (outcome.ok || closing.signal.aborted) return void held--;
    if (refused || delivery.attempts >= WEBHOOK_LIMITS.attempts) {
      held--;
      return deps.log(
        `webhooks: ${delivery.event} to ${withoutUrlSecrets(hook.url)} (webhook ${hook.id}) given up after ${delivery.attempts} attempts: ${outcome.error}`,
        'warn',
      );
    }
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        queue.push(delivery);
        pump();
      },
      backoffMs * 2 ** (delivery.attempts - 1),
    );
    timer.unref();
    timers.add(timer);
  }

  async function fanOut(publisherId: string, input: WebhookEventInput) {
    const hooks = (await deps.store.listWebhooks(publisherId)).filter((hook) => hook.events.includes(input.event));
    if (hooks.length === 0) return;
    const payload: WebhookPayload = { ...input, publisher_id: publisherId, at: new Date().toISOString() };
    const body = JSON.stringify(payload);
    if (Buffer.byteLength(body) > WEBHOOK_LIMITS.bodyMax)
      return deps.log(
        `webhooks: a ${input.event} body of publisher ${publisherId} is over ${WEBHOOK_LIMITS.bodyMax} bytes: not sent`,
        'warn',
      );
    for (const hook of hooks) hold({ id: randomUUID(), hook, event: input.event, body, attempts: 0 });
  }

  return {
    emit(publisherId, event) {
      if (closing.signal.aborted) return;
      fanOut(publisherId, event).catch((error) =>
        deps.log(
          `webhooks: the webhooks of publisher ${publisherId} could not be read: ${(error as Error).message}`,
          'warn',
        ),
      );
    },
    async close() {
      closing.abort();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...inflight]);
    },
  };
}
