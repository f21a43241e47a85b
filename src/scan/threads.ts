// The scan's worker threads: one per job for the CLI, kept across jobs for the registry.
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { seconds } from '../shared/scan.js';
import type { PartialReport, ScanJob } from './jobs.js';

/**
 * The worker's entry file, dist/scan/worker.js: found from this module in the bundle (a chunk in
 * dist/chunks/, or dist/scan/ itself) and from the TypeScript sources the tests run.
 */
function workerUrl(): URL {
  for (const candidate of ['./worker.js', '../scan/worker.js', '../../dist/scan/worker.js']) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(url)) return url;
  }
  throw new Error('the scan worker (dist/scan/worker.js) is missing: run `npm run build`');
}

/** Runs one job in a worker thread of its own, which ends with it (the CLI's way). */
export function inWorker(job: ScanJob): Promise<PartialReport> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerUrl(), { workerData: job });
    worker.once('message', (report: PartialReport) => {
      resolve(report);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the scan stopped (exit code ${code})`)));
  });
}

/** A scan stopped at its time limit (its worker is ended). */
export class ScanTimeout extends Error {
  constructor(readonly ms: number) {
    super(`the scan took longer than ${seconds(ms)}`);
  }
}

/**
 * A worker thread kept for many jobs, one at a time (the registry's way: grammars load once, and its
 * memory is part of the running server's). Started on first use; a crash or a timeout ends it, and
 * the next job starts a new one.
 */
export class ScanWorker {
  private worker: Worker | undefined;
  private pending: { resolve: (report: any) => void; reject: (error: Error) => void } | undefined;

  constructor(private readonly limits: { timeoutMs: number; maxOldGenerationSizeMb: number }) {}

  run<T = PartialReport>(job: ScanJob, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.pending) return Promise.reject(new Error('this scan worker is busy'));
    const worker = (this.worker ??= this.start());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.stop(new ScanTimeout(this.limits.timeoutMs)), this.limits.timeoutMs);
      const settle = () => {
        clearTimeout(timer);
        this.pending = undefined;
      };
      this.pending = {
        resolve: (report) => (settle(), resolve(report)),
        reject: (error) => (settle(), reject(error)),
      };
      worker.postMessage(job, transfer);
    });
  }

  /** Ends the thread; a job in progress fails with `reason`. */
  stop(reason = new Error('the scan worker was stopped')): Promise<unknown> {
    const worker = this.worker;
    this.worker = undefined;
    this.pending?.reject(reason);
    return worker ? worker.terminate() : Promise.resolve();
  }

  private start(): Worker {
    const worker = new Worker(workerUrl(), {
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxOldGenerationSizeMb },
    });
    worker.unref(); // an idle scan worker never keeps the process alive
    // A stopped worker's late message or exit belongs to a job already settled: the pending job may be
    // the next one, on a new worker, and must not take it.
    worker.on('message', (report: unknown) => {
      if (this.worker === worker) this.pending?.resolve(report);
    });
    const failed = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.pending?.reject(error);
    };
    worker.on('error', failed);
    worker.on('exit', (code) => failed(new Error(`the scan stopped (exit code ${code})`)));
    return worker;
  }
}
