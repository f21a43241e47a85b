// SQLite access for proxy tasks, sandbox results and callback deliveries (tables of migration
// "proxy tasks, results and callback deliveries").
import type { Db } from '../store/db.js';
import { TERMINAL_STATUSES } from './kinds.js';
import type { TaskKind } from './kinds.js';

export interface TaskRow {
  id: string;
  kind: TaskKind;
  user_id: string;
  mode: 'sandbox' | 'forward';
  upstream_id: string | null;
  callback_url: string | null;
  created_at: number;
  /** Sandbox: the delay the task was created with. */
  delay_ms: number;
  /** Sandbox: `ok`, or `failed` when its input could not make a result. */
  outcome: 'ok' | 'failed';
  /** The last status observed (sandbox: derived; forward: from the provider). Callbacks fire when it changes. */
  status: string;
  /** JSON. Forward: the provider's last view of the task, ids mapped. Sandbox: `{error}` when failed. */
  view: string;
  credits: number | null;
  updated_at: number;
}

export interface ResultRow {
  /** The capability part of the result URL (random, with an extension). */
  name: string;
  task_id: string;
  position: number;
  creation_id: string;
  /** A result that is a URL, as given. */
  url: string | null;
  /** A file under DIR/proxy-results; null once expired. */
  file: string | null;
  content_type: string | null;
  expires_at: number;
  /** Bytes of the file (0 for a URL). */
  size: number;
}

export interface DeliveryRow {
  seq: number;
  id: string;
  task_id: string;
  url: string;
  body: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_at: number;
  last_error: string | null;
}

const TERMINAL = TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ');

export type TaskStore = ReturnType<typeof createTaskStore>;

export function createTaskStore(db: Db) {
  const s = {
    insertTask: db.prepare(
      `INSERT INTO proxy_tasks (id, kind, user_id, mode, upstream_id, callback_url, created_at, delay_ms, outcome, status, view, credits, updated_at)
       VALUES (@id, @kind, @user_id, @mode, @upstream_id, @callback_url, @created_at, @delay_ms, @outcome, @status, @view, @credits, @updated_at)`,
    ),
    task: db.prepare('SELECT * FROM proxy_tasks WHERE id = ?'),
    observe: db.prepare('UPDATE proxy_tasks SET status = ?, view = ?, updated_at = ? WHERE id = ?'),
    watched: db.prepare(
      `SELECT * FROM proxy_tasks WHERE callback_url IS NOT NULL AND status NOT IN (${TERMINAL}) AND created_at > ?`,
    ),
    insertResult: db.prepare(
      `INSERT INTO proxy_results (name, task_id, position, creation_id, url, file, content_type, expires_at, size)
       VALUES (@name, @task_id, @position, @creation_id, @url, @file, @content_type, @expires_at, @size)`,
    ),
    storedBy: db.prepare(
      `SELECT coalesce(sum(r.size), 0) AS bytes, min(r.expires_at) AS first_expiry FROM proxy_results r JOIN proxy_tasks t ON t.id = r.task_id
       WHERE t.user_id = ? AND r.file IS NOT NULL AND r.expires_at > ?`,
    ),
    storedInAll: db.prepare('SELECT coalesce(sum(size), 0) AS bytes, min(expires_at) AS first_expiry FROM proxy_results WHERE file IS NOT NULL AND expires_at > ?'),
    results: db.prepare('SELECT * FROM proxy_results WHERE task_id = ? ORDER BY position'),
    result: db.prepare('SELECT * FROM proxy_results WHERE name = ?'),
    expired: db.prepare('SELECT * FROM proxy_results WHERE file IS NOT NULL AND expires_at <= ?'),
    forgetFile: db.prepare('UPDATE proxy_results SET file = NULL WHERE name = ?'),
    enqueue: db.prepare(
      `INSERT INTO proxy_deliveries (id, task_id, url, body, next_at, created_at, updated_at)
       VALUES (@id, @task_id, @url, @body, @next_at, @now, @now)`,
    ),
    // the oldest pending delivery of each task: a task's callbacks go out in order
    pendingHeads: db.prepare(
      `SELECT d.* FROM proxy_deliveries d
       WHERE d.state = 'pending'
         AND d.seq = (SELECT MIN(seq) FROM proxy_deliveries WHERE task_id = d.task_id AND state = 'pending')`,
    ),
    settle: db.prepare('UPDATE proxy_deliveries SET state = ?, attempts = ?, next_at = ?, last_error = ?, updated_at = ? WHERE id = ?'),
    deliveries: db.prepare('SELECT * FROM proxy_deliveries WHERE task_id = ? ORDER BY seq'),
  };

  return {
    insertTask: (row: TaskRow) => void s.insertTask.run(row),
    task: (id: string) => s.task.get(id) as TaskRow | undefined,
    observe: (id: string, status: string, view: string, now: number) => void s.observe.run(status, view, now, id),
    /** Unfinished tasks with a callback, created after `since`. */
    watched: (since: number) => s.watched.all(since) as TaskRow[],
    insertResult: (row: ResultRow) => void s.insertResult.run(row),
    results: (taskId: string) => s.results.all(taskId) as ResultRow[],
    result: (name: string) => s.result.get(name) as ResultRow | undefined,
    expiredResults: (now: number) => s.expired.all(now) as ResultRow[],
    /** Bytes of unexpired result files, of one user or of all, and when the first of them expires. */
    stored: (userId: string | undefined, now: number) =>
      (userId === undefined ? s.storedInAll.get(now) : s.storedBy.get(userId, now)) as { bytes: number; first_expiry: number | null },
    forgetFile: (name: string) => void s.forgetFile.run(name),
    enqueue: (row: { id: string; task_id: string; url: string; body: string; next_at: number; now: number }) => void s.enqueue.run(row),
    pendingHeads: () => s.pendingHeads.all() as DeliveryRow[],
    settle: (id: string, state: DeliveryRow['state'], attempts: number, nextAt: number, error: string | null, now: number) =>
      void s.settle.run(state, attempts, nextAt, error, now, id),
    deliveries: (taskId: string) => s.deliveries.all(taskId) as DeliveryRow[],
    transaction: <T>(fn: () => T): T => db.transaction(fn)(),
  };
}
