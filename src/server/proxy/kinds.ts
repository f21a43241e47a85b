import type { TASK_KINDS } from '../../contract/limits.js';
import {
  extendVideo,
  getRelightTask,
  getSkinEnhancerTask,
  getVideoTask,
  relightImage,
  skinEnhance,
} from '../../contract/proxy.js';
import { buildPath, type Operation } from '../../contract/operation.js';

export type TaskKind = (typeof TASK_KINDS)[number];
export type Provider = 'img' | 'vid';

interface KindInfo {
  provider: Provider;
  /** Image tasks answer `{data: {task_id, status, generated}}`; video `{task_id, state, credits, creations}`. */
  family: 'image' | 'video';
  submit: Operation;
  status: Operation;
  /** The field carrying the caller's callback URL. */
  callbackField: 'webhook_url' | 'callback_url';
  /** The states a sandbox task walks through, the last one on success. */
  states: readonly string[];
  failed: string;
}

const IMAGE_STATES = ['CREATED', 'IN_PROGRESS', 'COMPLETED'] as const;
const VIDEO_STATES = ['created', 'queueing', 'processing', 'success'] as const;

export const KINDS: Record<TaskKind, KindInfo> = {
  relight: {
    provider: 'img',
    family: 'image',
    submit: relightImage,
    status: getRelightTask,
    callbackField: 'webhook_url',
    states: IMAGE_STATES,
    failed: 'FAILED',
  },
  'skin-enhancer': {
    provider: 'img',
    family: 'image',
    submit: skinEnhance,
    status: getSkinEnhancerTask,
    callbackField: 'webhook_url',
    states: IMAGE_STATES,
    failed: 'FAILED',
  },
  video: {
    provider: 'vid',
    family: 'video',
    submit: extendVideo,
    status: getVideoTask,
    callbackField: 'callback_url',
    states: VIDEO_STATES,
    failed: 'failed',
  },
};

export const TERMINAL_STATUSES = ['COMPLETED', 'FAILED', 'success', 'failed'] as const;
export const isTerminal = (status: string) => (TERMINAL_STATUSES as readonly string[]).includes(status);

const PROVIDER_PREFIX: Record<Provider, string> = { img: '/proxy/img', vid: '/proxy/vid' };

/** The provider's path for submitting a task: our path without `/proxy/img` or `/proxy/vid`. */
export function upstreamSubmitPath(kind: TaskKind): string {
  const info = KINDS[kind];
  return info.submit.path.slice(PROVIDER_PREFIX[info.provider].length);
}

/** The provider's path for a task's status, with the provider's own task id. */
export function upstreamStatusPath(kind: TaskKind, upstreamId: string): string {
  const info = KINDS[kind];
  return buildPath(info.status.path, { task_id: upstreamId }).slice(PROVIDER_PREFIX[info.provider].length);
}

/** The status of a task view (the poll shape without the `data` wrapper). */
export function statusOf(kind: TaskKind, view: Record<string, unknown>): string {
  const value = KINDS[kind].family === 'image' ? view.status : view.state;
  return typeof value === 'string' ? value : 'unknown';
}

/** The poll answer for a view: images wrap it in `data`, video does not. */
export function pollShape(kind: TaskKind, view: Record<string, unknown>): Record<string, unknown> {
  return KINDS[kind].family === 'image' ? { data: view } : view;
}
