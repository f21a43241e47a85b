// The registry's metrics (`GET /metrics`, Prometheus' text format, prom-client): one registry of
// metrics per server, so that servers in one process (the tests) never mix their counts. Requests
// are labelled by the route's pattern (never the raw path: ids would make the series unbounded).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ArchiveStorage } from './archives/storage.js';
import type { UploadScanner } from './scan-upload.js';
import type { RegistryStore } from './store/registry-store.js';

/** Seconds: from a cached read (under a millisecond) to a long upload. */
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Observes a value (a duration in seconds, or 1 for a count) into one labelled series. */
type Observe = (value: number) => void;

/** How many observations wait before they are handed to prom-client together. */
const PENDING_MAX = 1024;

/**
 * Observations of the request path (each request's count and duration, each store and storage call's
 * duration), kept and handed to prom-client in batches: when PENDING_MAX wait, and before each scrape
 * (the metrics' `collect`), so a scrape counts every one. Handed one by one, from the request path,
 * they cost more than in a loop (bench/results.md).
 */
export class PendingObservations {
  #series: Observe[] = [];
  #values = new Float64Array(PENDING_MAX);

  add(observe: Observe, value: number): void {
    this.#values[this.#series.length] = value;
    if (this.#series.push(observe) === PENDING_MAX) this.flush();
  }

  flush(): void {
    const series = this.#series;
    this.#series = [];
    for (let i = 0; i < series.length; i++) series[i](this.#values[i]);
  }
}

export function createMetrics() {
  const registry = new Registry();
  const registers = [registry];
  const pending = new PendingObservations();
  const collect = () => pending.flush();
  return {
    registry,
    pending,
    requests: new Counter({
      name: 'nodereg_http_requests_total',
      help: 'Requests answered, by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      registers,
      collect,
    }),
    requestSeconds: new Histogram({
      name: 'nodereg_http_request_duration_seconds',
      help: 'Time from the request to the last byte of its answer, by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      buckets: BUCKETS,
      registers,
      collect,
    }),
    databaseSeconds: new Histogram({
      name: 'nodereg_database_duration_seconds',
      help: 'Time of a call to the database, by store operation and outcome',
      labelNames: ['operation', 'outcome'],
      buckets: BUCKETS,
      registers,
      collect,
    }),
    storageSeconds: new Histogram({
      name: 'nodereg_storage_duration_seconds',
      help: 'Time of a call to the archive storage (until a download begins), by operation and outcome',
      labelNames: ['operation', 'outcome'],
      buckets: BUCKETS,
      registers,
      collect,
    }),
    scanQueue: new Gauge({
      name: 'nodereg_scan_queue_length',
      help: 'Uploads being scanned or waiting for a scan worker',
      registers,
    }),
    scanSeconds: new Histogram({
      name: 'nodereg_scan_duration_seconds',
      help: "Time of an upload's scan, its wait for a worker included",
      buckets: BUCKETS,
      registers,
    }),
    uploadBytes: new Counter({
      name: 'nodereg_upload_bytes_total',
      help: 'Bytes of archives stored',
      registers,
    }),
    rateLimited: new Counter({
      name: 'nodereg_rate_limited_total',
      help: 'Requests refused by the rate limit (429)',
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * A request's count and duration under its labels. The labelled series are looked up once per
 * route, method and status and kept: the labels object, its checks and its copy are not made again
 * for every request.
 */
export function requestCounter(metrics: Metrics) {
  const series = new Map<string, { count: Observe; observe: Observe }>();
  return (route: string, method: string, status: number, seconds: number) => {
    const key = `${route} ${method} ${status}`;
    let found = series.get(key);
    if (!found) {
      const labels = { route, method, status: String(status) };
      const { inc } = metrics.requests.labels(labels);
      const { observe } = metrics.requestSeconds.labels(labels);
      found = { count: inc, observe };
      series.set(key, found);
    }
    metrics.pending.add(found.count, 1);
    metrics.pending.add(found.observe, seconds);
  };
}

/** The time since `started` that `run` took into the series of its operation, as it ended (`ok`) or threw (`error`). */
function timed<T>(
  pending: PendingObservations,
  series: { ok: Observe; error: Observe },
  started: number,
  run: Promise<T>,
): Promise<T> {
  return run.then(
    (result) => {
      pending.add(series.ok, (performance.now() - started) / 1000);
      return result;
    },
    (error: unknown) => {
      pending.add(series.error, (performance.now() - started) / 1000);
      throw error;
    },
  );
}

/**
 * A copy of `target` (an object of functions, as the stores and storages are) whose methods that
 * answer a promise are timed into `histogram` under their names. A copy, not a Proxy: a method
 * replaced on it later (a test's hook) replaces it there only.
 */
function timedMethods<T extends object>(
  target: T,
  histogram: Histogram<'operation' | 'outcome'>,
  pending: PendingObservations,
): T {
  const copy = { ...target } as Record<string, unknown>;
  for (const [name, value] of Object.entries(copy)) {
    if (typeof value !== 'function') continue;
    // the operation's two series, made when it is first timed (a scrape lists only operations called)
    let series: { ok: Observe; error: Observe } | undefined;
    const seriesOf = () =>
      (series ??= {
        ok: histogram.labels({ operation: name, outcome: 'ok' }).observe,
        error: histogram.labels({ operation: name, outcome: 'error' }).observe,
      });
    copy[name] = (...args: unknown[]) => {
      // from before the call: an async method of the SQLite store has done its work when it returns
      const started = performance.now();
      const result = value.apply(target, args);
      return result instanceof Promise ? timed(pending, seriesOf(), started, result) : result;
    };
  }
  return copy as T;
}

/** The database's store, each call timed. */
export const timedStore = (store: RegistryStore, metrics: Metrics) =>
  timedMethods(store, metrics.databaseSeconds, metrics.pending);

/** The archive storage, each call timed, and the bytes of each archive stored counted. */
export function timedStorage(archives: ArchiveStorage, metrics: Metrics): ArchiveStorage {
  const storage = timedMethods(archives, metrics.storageSeconds, metrics.pending);
  const commit = storage.commit;
  return {
    ...storage,
    async commit(received, key) {
      await commit(received, key);
      metrics.uploadBytes.inc(received.size);
    },
  };
}

/** The upload scanner, its queue (scans running or waiting for a worker) and their times measured. */
export function measuredScanner(scanner: UploadScanner, metrics: Metrics): UploadScanner {
  return {
    ...scanner,
    async scan(...args) {
      metrics.scanQueue.inc();
      const end = metrics.scanSeconds.startTimer();
      try {
        return await scanner.scan(...args);
      } finally {
        end();
        metrics.scanQueue.dec();
      }
    },
  };
}
