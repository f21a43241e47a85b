// A task of the AI proxy as the CLI sees it: its status and results from either poll shape, and how
// to ask the registry for it.
import type { Client } from '../client/index.js';
import { routes } from '../client/routes.js';
import type { TASK_KINDS } from '../contract/limits.js';

export type TaskKind = (typeof TASK_KINDS)[number];

/** A task's status and results, from either poll shape. */
export interface TaskState {
  id: string;
  status: string;
  results: string[];
  done: boolean;
  failed: boolean;
  credits?: number;
  error?: string;
}

export function readState(kind: TaskKind, answer: unknown): TaskState {
  const a = (answer ?? {}) as Record<string, unknown>;
  if (kind === 'video') {
    const state = String(a.state ?? 'unknown');
    const creations = Array.isArray(a.creations) ? (a.creations as { url?: unknown }[]) : [];
    return {
      id: String(a.task_id ?? ''),
      status: state,
      results: creations.map((c) => c.url).filter((url): url is string => typeof url === 'string'),
      done: state === 'success' || state === 'failed',
      failed: state === 'failed',
      credits: typeof a.credits === 'number' ? a.credits : undefined,
      error: typeof a.error === 'string' ? a.error : undefined,
    };
  }
  const data = (a.data ?? {}) as Record<string, unknown>;
  const status = String(data.status ?? 'CREATED');
  return {
    id: String(data.task_id ?? ''),
    status,
    results: Array.isArray(data.generated)
      ? (data.generated as unknown[]).filter((url): url is string => typeof url === 'string')
      : [],
    done: status === 'COMPLETED' || status === 'FAILED',
    failed: status === 'FAILED',
    error: typeof data.error === 'string' ? data.error : undefined,
  };
}

export async function fetchStatus(client: Client, kind: TaskKind, taskId: string): Promise<unknown> {
  const params = { task_id: taskId };
  if (kind === 'relight') return client.call(routes.getRelightTask, { params });
  if (kind === 'skin-enhancer') return client.call(routes.getSkinEnhancerTask, { params });
  return client.call(routes.getVideoTask, { params });
}

export const followHint = (kind: TaskKind, id: string) => `nodereg task status ${kind} ${id} --wait`;

/** The human lines of a task's state: its status, then its results. */
export function describeState(kind: TaskKind, state: TaskState): string {
  const credits = state.credits !== undefined ? ` (${state.credits} credits)` : '';
  const error = state.error ? `: ${state.error}` : '';
  return [
    `${kind} task ${state.id}: ${state.status}${credits}${error}`,
    ...state.results.map((url) => `  ${url}`),
  ].join('\n');
}
