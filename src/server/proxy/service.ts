// The AI proxy (DESIGN.md §4): submissions in sandbox or forward mode, status polls, sandbox result
// files, and one scheduler that advances watched tasks and delivers their callbacks. Each concern is a
// module of named functions over the ProxyDeps this service makes once.
import type { Prepared } from './bodies.js';
import { createProxyDeps, type ProxyContext, type TaskBodies } from './deps.js';
import { KINDS, type TaskKind } from './kinds.js';
import { purgeExpired, resultFile, status } from './results.js';
import { startScheduler, stopScheduler } from './scheduler.js';
import { submit } from './submissions.js';
import type { Principal } from '../route.js';

export { RESULTS_PREFIX, type TaskBodies } from './deps.js';
export { CALLBACKS_IN_FLIGHT } from './scheduler.js';

export type ProxyService = ReturnType<typeof createProxyService>;

export function createProxyService(ctx: ProxyContext) {
  const deps = createProxyDeps(ctx);
  startScheduler(deps, () => purgeExpired(deps));
  return {
    options: deps.options,
    submit: <K extends TaskKind>(kind: K, principal: Principal, body: TaskBodies[K], prepared?: Prepared<K>) =>
      submit(deps, kind, principal, body, prepared),
    status: (kind: TaskKind, taskId: string, principal: Principal) => status(deps, kind, taskId, principal),
    resultFile: (name: string, rangeHeader?: string) => resultFile(deps, name, rangeHeader),
    /** Deliveries of a task, oldest first (tests and diagnostics). */
    deliveries: (taskId: string) => deps.store.deliveries(taskId),
    mode: (kind: TaskKind) => (deps.upstreams[KINDS[kind].provider] ? 'forward' : 'sandbox'),
    /** Stops the scheduler and waits for in-flight work; pending deliveries stay stored for the next start. */
    close: () => stopScheduler(deps),
  };
}
