// How a task's status moves: a sandbox task along its timeline, a forwarded one by polling its
// provider. Every status change queues the task's callbacks.
import { randomUUID } from 'node:crypto';
import { HttpError } from '../errors.js';
import type { ProxyDeps, View } from './deps.js';
import { isTerminal, KINDS, statusOf, upstreamStatusPath, type TaskKind } from './kinds.js';
import { sandboxStep } from './sandbox.js';
import type { ResultRow, TaskDecision, TaskRow } from './store.js';
import { callUpstream, upstreamView } from './upstream.js';

const resultUrl = (deps: ProxyDeps, row: ResultRow) => row.url ?? `${deps.ctx.publicUrl()}/proxy/results/${row.name}`;

/** A sandbox task's view at a step of its timeline; results appear only in the final, successful state. */
export function sandboxView(deps: ProxyDeps, task: TaskRow, step: number, stored: ResultRow[]): View {
  const info = KINDS[task.kind];
  const last = step >= info.states.length - 1;
  const failed = last && task.outcome === 'failed';
  const status = failed ? info.failed : info.states[step];
  const results = last && !failed ? stored : [];
  const error = failed ? { error: (JSON.parse(task.view) as { error?: string }).error } : {};
  if (info.family === 'image')
    return { task_id: task.id, status, generated: results.map((row) => resultUrl(deps, row)), ...error };
  return {
    task_id: task.id,
    state: status,
    credits: task.credits ?? 0,
    creations: results.map((row) => ({ id: row.creation_id, url: resultUrl(deps, row) })),
    ...error,
  };
}

export const stepOf = (task: TaskRow, now: number) =>
  sandboxStep(KINDS[task.kind].states.length, task.created_at, task.delay_ms, now);
/** The step of its timeline a sandbox task's stored status is at. */
export const storedStep = (task: TaskRow) => {
  const info = KINDS[task.kind];
  return task.status === info.failed ? info.states.length - 1 : Math.max(0, info.states.indexOf(task.status));
};

/** The callbacks of a task for these views (none without a callback URL). */
export const callbacksOf = (task: TaskRow, views: View[]) =>
  task.callback_url
    ? views.map((view) => ({ id: randomUUID(), url: task.callback_url!, body: JSON.stringify(view) }))
    : [];

/**
 * Brings a sandbox task's stored status up to its timeline, queueing one callback per state passed.
 * Under the task's lock: of instances catching up at once, one queues each callback.
 */
export function catchUpSandbox(deps: ProxyDeps, taskId: string, now: number): Promise<View> {
  return deps.store.update(taskId, now, (task, results): TaskDecision<View> => {
    const seen = storedStep(task);
    // Never backwards: another instance, whose clock read came later, may have moved it further.
    const step = Math.max(seen, stepOf(task, now));
    const passed: View[] = [];
    for (let s = seen + 1; s <= step; s++) passed.push(sandboxView(deps, task, s, results));
    const view = sandboxView(deps, task, step, results);
    return {
      observe: step > seen ? { status: statusOf(task.kind, view), view: task.view } : undefined,
      callbacks: callbacksOf(task, passed),
      value: view,
    };
  });
}

/** Records the provider's latest view of a task; a changed status queues a callback. */
async function observeForward(deps: ProxyDeps, taskId: string, view: View, now: number): Promise<void> {
  await deps.store.update(taskId, now, (task) => forwardDecision(task, view));
}

/**
 * What the provider's view of a task changes. A finished task keeps its status: a view of another
 * status then is an older one, answered to a poll that was sent before the one that saw it finish.
 */
export function forwardDecision(task: TaskRow, view: View): TaskDecision<void> {
  const status = statusOf(task.kind, view);
  const json = JSON.stringify(view);
  const unchanged = status === task.status && json === task.view;
  if (unchanged || (isTerminal(task.status) && status !== task.status)) return { callbacks: [], value: undefined };
  return {
    observe: { status, view: json },
    callbacks: status !== task.status ? callbacksOf(task, [view]) : [],
    value: undefined,
  };
}

/** The provider's task view in our poll shape, with list fields present and our task id. */
export function normaliseView(kind: TaskKind, raw: View, taskId: string): View {
  if (KINDS[kind].family === 'image') {
    return {
      ...raw,
      task_id: taskId,
      status: typeof raw.status === 'string' ? raw.status : 'CREATED',
      generated: Array.isArray(raw.generated) ? raw.generated : [],
    };
  }
  return {
    ...raw,
    task_id: taskId,
    state: typeof raw.state === 'string' ? raw.state : 'created',
    credits: typeof raw.credits === 'number' ? raw.credits : 0,
    creations: Array.isArray(raw.creations) ? raw.creations : [],
  };
}

export async function pollUpstream(deps: ProxyDeps, task: TaskRow): Promise<View> {
  const upstream = deps.upstreams[KINDS[task.kind].provider];
  if (!upstream) {
    throw new HttpError(
      'upstream_error',
      `task ${task.id} was sent to an AI provider this registry no longer forwards to`,
    );
  }
  const answer = await callUpstream(
    upstream,
    'GET',
    upstreamStatusPath(task.kind, task.upstream_id!),
    undefined,
    deps.closing.signal,
  );
  const view = normaliseView(task.kind, upstreamView(answer, KINDS[task.kind].family), task.id);
  await observeForward(deps, task.id, view, Date.now());
  return view;
}
