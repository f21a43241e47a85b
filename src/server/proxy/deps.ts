// What every part of the AI proxy works over: one explicit dependency object, made once per server by
// createProxyService, that the named functions of submissions, polling and the scheduler take.
import { randomUUID } from 'node:crypto';
import type { RelightBody, SkinEnhancerBody, VideoExtendBody } from '../../contract/proxy.js';
import type { z } from 'zod';
import type { ServerContext } from '../context.js';
import type { Provider } from './kinds.js';
import { callbackHostAllowed, resolveProxyOptions } from './options.js';
import type { TaskRow, TaskStore } from './store.js';
import type { Upstream } from './upstream.js';

export interface TaskBodies {
  relight: z.output<typeof RelightBody>;
  'skin-enhancer': z.output<typeof SkinEnhancerBody>;
  video: z.output<typeof VideoExtendBody>;
}

export type View = Record<string, unknown>;
export type TaskBase = Omit<
  TaskRow,
  'mode' | 'upstream_id' | 'delay_ms' | 'outcome' | 'status' | 'view' | 'credits' | 'next_poll_at'
>;
export type ProxyContext = Pick<ServerContext, 'tasks' | 'archives' | 'options' | 'keys' | 'publicUrl' | 'log'>;

/** Where sandbox result files live in the archive storage (no publisher id starts with "_"). */
export const RESULTS_PREFIX = '_proxy-results/';

/** The scheduler's moving parts: its timer, the round running, and the polls and deliveries under way. */
export interface SchedulerState {
  timer: NodeJS.Timeout | undefined;
  closed: boolean;
  ticking: Promise<void> | undefined;
  /** A wake came during a round: run another right after it. */
  again: boolean;
  inflight: Map<string, Promise<void>>;
  purging: Promise<void> | undefined;
  purger: NodeJS.Timeout | undefined;
}

export interface ProxyDeps {
  ctx: ProxyContext;
  options: ReturnType<typeof resolveProxyOptions>;
  store: TaskStore;
  /** Whether a callback URL's host is allowed (serve --callback-allow). */
  allowed: (url: string) => boolean;
  /** Aborted on close: cuts upstream calls and callbacks under way. */
  closing: AbortController;
  userAgent: string;
  /** This instance, as the owner of the deliveries it leases. */
  owner: string;
  /**
   * How long a delivery stays leased: longer than one attempt can take (it is cut at the callback
   * timeout), so two instances never deliver it at once; a dead instance's lease runs out after it.
   */
  leaseMs: number;
  /** The provider each family forwards to; none means sandbox mode. */
  upstreams: Record<Provider, Upstream | undefined>;
  scheduler: SchedulerState;
}

export function createProxyDeps(ctx: ProxyContext): ProxyDeps {
  const options = resolveProxyOptions(ctx.options.proxy, ctx.options.host);
  return {
    ctx,
    options,
    store: ctx.tasks,
    allowed: callbackHostAllowed(options.callbackAllow),
    closing: new AbortController(),
    userAgent: `nodereg/${ctx.options.version ?? '0.0.0'}`,
    owner: randomUUID(),
    leaseMs: 2 * options.callbackTimeout + 10_000,
    upstreams: {
      img: options.imgUpstream
        ? {
            baseUrl: options.imgUpstream,
            key: options.imgKey,
            keyHeader: options.imgKeyHeader,
            timeoutMs: options.upstreamTimeout,
            keyEnv: 'NODEREG_IMG_API_KEY',
          }
        : undefined,
      vid: options.vidUpstream
        ? {
            baseUrl: options.vidUpstream,
            key: options.vidKey,
            keyHeader: options.vidKeyHeader,
            timeoutMs: options.upstreamTimeout,
            keyEnv: 'NODEREG_VID_API_KEY',
          }
        : undefined,
    },
    scheduler: {
      timer: undefined,
      closed: false,
      ticking: undefined,
      again: false,
      inflight: new Map(),
      purging: undefined,
      purger: undefined,
    },
  };
}
