// Status polls and sandbox result files.
import type { Readable } from 'node:stream';
import { requestedRange } from '../archives/range.js';
import type { ByteRange } from '../archives/storage.js';
import { notFound } from '../errors.js';
import type { Principal } from '../route.js';
import { RESULTS_PREFIX, type ProxyDeps, type View } from './deps.js';
import { isTerminal, pollShape, type TaskKind } from './kinds.js';
import { catchUpSandbox, pollUpstream } from './polling.js';
import { wake } from './scheduler.js';
import type { TaskRow } from './store.js';

/** A task of this kind that the principal may see (its creator, or an admin); anyone else gets 404. */
async function visibleTask(deps: ProxyDeps, kind: TaskKind, taskId: string, principal: Principal): Promise<TaskRow> {
  const task = await deps.store.task(taskId);
  if (!task || task.kind !== kind || (!principal.admin && task.user_id !== principal.userId)) {
    throw notFound(`no ${kind} task ${taskId}`);
  }
  return task;
}

export async function status(deps: ProxyDeps, kind: TaskKind, taskId: string, principal: Principal): Promise<View> {
  const task = await visibleTask(deps, kind, taskId, principal);
  if (task.mode === 'sandbox') {
    const view = await catchUpSandbox(deps, task.id, Date.now());
    wake(deps);
    return pollShape(kind, view);
  }
  if (isTerminal(task.status)) return pollShape(kind, JSON.parse(task.view) as View);
  const view = await pollUpstream(deps, task);
  wake(deps);
  return pollShape(kind, view);
}

/**
 * The file behind a result URL, from the archive storage, or the one byte range a `Range` header asks
 * (when the size is recorded); 404 when unknown or expired.
 */
export async function resultFile(
  deps: ProxyDeps,
  name: string,
  rangeHeader?: string,
): Promise<{ stream: Readable; contentType: string; size: number; range?: ByteRange }> {
  const row = await deps.store.result(name);
  if (!row || !row.file)
    throw notFound(row ? 'this result has expired (results are kept for 24 hours)' : 'no such result');
  if (row.expires_at <= Date.now()) throw notFound('this result has expired (results are kept for 24 hours)');
  const range = row.size ? requestedRange(rangeHeader, row.size) : undefined;
  const file = await deps.ctx.archives.open(RESULTS_PREFIX + row.file, range);
  if (!file) throw notFound('this result is no longer stored');
  return { stream: file.stream, contentType: row.content_type ?? 'application/octet-stream', size: file.size, range };
}

/** Removes expired result files; every instance may, removing twice is harmless. */
export async function purgeExpired(deps: ProxyDeps): Promise<void> {
  for (const row of await deps.store.expiredResults(Date.now())) {
    await deps.ctx.archives.remove(RESULTS_PREFIX + row.file!);
    await deps.store.forgetFile(row.name);
  }
}
