// The scheduler: one loop per instance that advances sandbox timelines, polls providers for watched
// forward tasks and delivers callbacks, sleeping until the next thing is due.
import { CALLBACK_EVENT } from '../../contract/limits.js';
import { withoutUrlSecrets } from '../../shared/url.js';
import { sendCallback, type DeliveryOutcome } from '../signed-callbacks.js';
import type { ProxyDeps } from './deps.js';
import { KINDS } from './kinds.js';
import { CALLBACK_RETRIES, pollSpacing } from './options.js';
import { catchUpSandbox, pollUpstream, stepOf, storedStep } from './polling.js';
import { sandboxNextChange } from './sandbox.js';
import type { DeliveryRow } from './store.js';

/** Forward tasks with a callback are polled for at most this long. */
const WATCH_FOR_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 60 * 60 * 1000;
/**
 * The longest the scheduler sleeps; it re-reads the store when it wakes. With a shared database this is
 * also how soon an instance takes up work another one left (a delivery whose lease ran out).
 */
const MAX_SLEEP_MS = 30_000;
/**
 * Callbacks being sent at once, at most: each holds a connection for up to --callback-timeout, and one
 * user's tasks could otherwise hold as many as they have (1,000 tasks: ~950 connections).
 */
export const CALLBACKS_IN_FLIGHT = 20;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

function run(deps: ProxyDeps, key: string, work: () => Promise<void>): void {
  const { inflight } = deps.scheduler;
  const promise = work()
    .catch((error) => deps.ctx.log(`proxy: ${key}: ${messageOf(error)}`))
    .finally(() => {
      inflight.delete(key);
      wake(deps);
    });
  inflight.set(key, promise);
}

async function deliver(deps: ProxyDeps, delivery: DeliveryRow): Promise<void> {
  const { ctx, options, store, owner, closing } = deps;
  const permitted = deps.allowed(delivery.url);
  const outcome: DeliveryOutcome = permitted
    ? await sendCallback({
        url: delivery.url,
        event: CALLBACK_EVENT,
        body: delivery.body,
        deliveryId: delivery.id,
        key: ctx.keys.callback,
        timeoutMs: options.callbackTimeout,
        userAgent: deps.userAgent,
        closing: closing.signal,
      })
    : { ok: false, error: 'the host is not allowed by --callback-allow' };
  // On shutdown the attempt does not count: the lease goes, and it is made again (here after a
  // restart, or at once by another instance).
  if (closing.signal.aborted) return store.release(delivery.id, owner);
  const attempts = delivery.attempts + 1;
  const now = Date.now();
  if (outcome.ok) return store.settle(delivery.id, owner, 'delivered', attempts, now, null, now);
  if (!permitted || attempts > CALLBACK_RETRIES) {
    ctx.log(
      `proxy: callback ${delivery.id} for task ${delivery.task_id} to ${withoutUrlSecrets(delivery.url)} given up after ${attempts} attempts: ${outcome.error}`,
    );
    return store.settle(delivery.id, owner, 'failed', attempts, now, outcome.error, now);
  }
  await store.settle(
    delivery.id,
    owner,
    'pending',
    attempts,
    now + options.callbackBackoff * 2 ** (attempts - 1),
    outcome.error,
    now,
  );
}

/** Sandbox timelines caught up; answers when the next watched task is due. */
async function advanceWatched(deps: ProxyDeps, now: number, next: number): Promise<number> {
  for (const task of await deps.store.watched(now - WATCH_FOR_MS)) {
    if (task.mode === 'sandbox') {
      // Only a task whose timeline passed a state is written: a round comes with every submission and
      // every callback sent, and wrote each waiting task again (3,000 of one user took a core).
      if (stepOf(task, now) > storedStep(task)) await catchUpSandbox(deps, task.id, now);
      const at = sandboxNextChange(KINDS[task.kind].states.length, task.created_at, task.delay_ms, now);
      if (at !== undefined) next = Math.min(next, at);
    } else if (deps.upstreams[KINDS[task.kind].provider]) {
      next = Math.min(next, Math.max(task.next_poll_at, now + 1));
    }
  }
  return next;
}

/** One round: sandbox timelines caught up, due polls and deliveries claimed and started. */
async function round(deps: ProxyDeps): Promise<number> {
  const { store, options } = deps;
  const now = Date.now();
  let next = await advanceWatched(deps, now, now + MAX_SLEEP_MS);
  // A poll claimed is not made again by anyone before the poll interval has passed; then an older
  // task's next poll is put off further (pollSpacing).
  for (const task of await store.claimPolls(now - WATCH_FOR_MS, now, options.upstreamPollInterval)) {
    if (!deps.upstreams[KINDS[task.kind].provider]) continue;
    const at = now + pollSpacing(now - task.created_at, options.upstreamPollInterval);
    // one poll of a task at a time here: a slow answer is not overtaken by the next poll's
    if (deps.scheduler.inflight.has(`poll:${task.id}`)) {
      next = Math.min(next, at);
      continue;
    }
    run(deps, `poll:${task.id}`, () =>
      store
        .deferPoll(task.id, at)
        .then(() => pollUpstream(deps, task))
        .then(() => {}),
    );
    next = Math.min(next, at);
  }
  // Only as many as there is room for: each one that ends wakes the scheduler, which claims the next.
  const room =
    CALLBACKS_IN_FLIGHT - [...deps.scheduler.inflight.keys()].filter((key) => key.startsWith('delivery:')).length;
  if (room > 0) {
    for (const delivery of await store.claimDeliveries(now, now + deps.leaseMs, deps.owner, room)) {
      run(deps, `delivery:${delivery.id}`, () => deliver(deps, delivery));
    }
  }
  const due = await store.nextDeliveryAt();
  if (due !== undefined) next = Math.min(next, Math.max(due, now + 1));
  return next;
}

function tick(deps: ProxyDeps): void {
  const state = deps.scheduler;
  state.timer = undefined;
  if (state.closed) return;
  if (!deps.ctx.publicUrl()) {
    // Not listening yet: result URLs in callbacks need the address; resume once it is known.
    state.timer = setTimeout(() => tick(deps), 50);
    state.timer.unref();
    return;
  }
  // One round at a time; a wake during a round runs another right after it.
  if (state.ticking) {
    state.again = true;
    return;
  }
  state.ticking = round(deps)
    .catch((error) => {
      deps.ctx.log(`proxy: scheduler: ${messageOf(error)}`);
      return Date.now() + 1_000;
    })
    .then((next) => {
      state.ticking = undefined;
      if (state.closed) return;
      if (state.again) {
        state.again = false;
        return wake(deps);
      }
      if (state.timer) return;
      state.timer = setTimeout(() => tick(deps), Math.min(Math.max(next - Date.now(), 0), MAX_SLEEP_MS));
      state.timer.unref();
    });
}

/** Runs the scheduler soon: after a submission, a poll, or a delivery. */
export function wake(deps: ProxyDeps): void {
  const state = deps.scheduler;
  if (state.closed) return;
  if (state.timer) clearTimeout(state.timer);
  state.timer = setTimeout(() => tick(deps), 0);
  state.timer.unref();
}

/** Starts the hourly purge of expired result files and the scheduler. */
export function startScheduler(deps: ProxyDeps, purgeExpired: () => Promise<void>): void {
  const state = deps.scheduler;
  const purge = () => purgeExpired().catch((error) => deps.ctx.log(`proxy: purge: ${messageOf(error)}`));
  state.purging = purge();
  state.purger = setInterval(() => (state.purging = purge()), PURGE_EVERY_MS);
  state.purger.unref();
  // Resume what a previous run left: pending deliveries and unfinished watched tasks.
  wake(deps);
}

/** Stops the scheduler and waits for in-flight work; pending deliveries stay stored for the next start. */
export async function stopScheduler(deps: ProxyDeps): Promise<void> {
  const state = deps.scheduler;
  state.closed = true;
  if (state.timer) clearTimeout(state.timer);
  clearInterval(state.purger);
  deps.closing.abort();
  await state.ticking;
  await Promise.allSettled([...state.inflight.values(), state.purging]);
}
