// The AI proxy's tasks, sandbox results and callback deliveries: the interface every database
// implements, and its SQLite implementation (tables of migration "proxy tasks, results and callback
// deliveries", leases of 'proxy-leases'). PostgreSQL: postgres-task-store.ts.
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
  /** Forward tasks with a callback: when the provider is polled next (a claim: no one polls before). */
  next_poll_at: number;
}

export interface ResultRow {
  /** The capability part of the result URL (random, with an extension). */
  name: string;
  task_id: string;
  position: number;
  creation_id: string;
  /** A result that is a URL, as given. */
  url: string | null;
  /** The stored file's name (under `_proxy-results/` in the archive storage); null once expired. */
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
  /** While an instance delivers it: until when, and which instance (a lease). */
  lease_until: number | null;
  lease_owner: string | null;
}

export interface NewDelivery {
  id: string;
  task_id: string;
  url: string;
  body: string;
  next_at: number;
}

/** What `update` does to a task under its lock: a new status and view, callbacks to queue, a value to return. */
export interface TaskDecision<T> {
  observe?: { status: string; view: string };
  callbacks: { id: string; url: string; body: string }[];
  value: T;
}

/** Bytes of unexpired result files, of one user or of all, and when the first of them expires. */
export interface StoredResults {
  bytes: number;
  first_expiry: number | null;
}

/** The quotas a new result file must fit, in bytes kept until they expire. */
export interface ResultQuota {
  user: number;
  total: number;
}

/** Why a result did not fit: the quota it would pass (the user's is checked first) and what is kept now. */
export interface QuotaRefusal {
  scope: 'user' | 'total';
  stored: StoredResults;
}

/**
 * The proxy's storage, on SQLite or PostgreSQL. Every decision that two instances could both make
 * (advance a task, poll it, deliver a callback) is taken here, under a lock or a claim.
 */
export interface TaskStore {
  /**
   * The task, its first result (sandbox) and its first callback, together. With `quota`, only if the
   * result's size fits it, decided with the insert as one step (also across instances): else nothing
   * is written and the refusal says which quota it would pass.
   */
  createTask(
    task: TaskRow,
    result: ResultRow | undefined,
    callback: NewDelivery | undefined,
    quota?: ResultQuota,
  ): Promise<QuotaRefusal | undefined>;
  task(id: string): Promise<TaskRow | undefined>;
  /** Runs `decide` on the task and its results under the task's lock, and applies the decision. */
  update<T>(id: string, now: number, decide: (task: TaskRow, results: ResultRow[]) => TaskDecision<T>): Promise<T>;
  /** Unfinished tasks with a callback, created after `since`. */
  watched(since: number): Promise<TaskRow[]>;
  /** Forward tasks due for a poll, each claimed until `now + interval` (no other instance polls it before). */
  claimPolls(since: number, now: number, interval: number): Promise<TaskRow[]>;
  /** Puts a task's next poll off until `at` (never earlier than it is already). */
  deferPoll(id: string, at: number): Promise<void>;
  results(taskId: string): Promise<ResultRow[]>;
  result(name: string): Promise<ResultRow | undefined>;
  expiredResults(now: number): Promise<ResultRow[]>;
  forgetFile(name: string): Promise<void>;
  /** Due deliveries that head their task's queue and nobody holds, leased to `owner` until `leaseUntil`. */
  claimDeliveries(now: number, leaseUntil: number, owner: string, limit: number): Promise<DeliveryRow[]>;
  /** When the next queued delivery is due (or its lease ends); undefined when none is pending. */
  nextDeliveryAt(): Promise<number | undefined>;
  /** Records an attempt and lets the lease go; only the lease's owner can. */
  settle(
    id: string,
    owner: string,
    state: DeliveryRow['state'],
    attempts: number,
    nextAt: number,
    error: string | null,
    now: number,
  ): Promise<void>;
  /** Lets a lease go without an attempt (a shutdown): another instance may deliver it at once. */
  release(id: string, owner: string): Promise<void>;
  /** Deliveries of a task, oldest first. */
  deliveries(taskId: string): Promise<DeliveryRow[]>;
}

const TERMINAL = TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ');
// the oldest pending delivery of each task: a task's callbacks go out in order
const HEADS = `d.state = 'pending' AND d.seq = (SELECT MIN(seq) FROM proxy_deliveries WHERE task_id = d.task_id AND state = 'pending')`;

function prepareStatements(db: Db) {
  return {
    insertTask: db.prepare(
      `INSERT INTO proxy_tasks (id, kind, user_id, mode, upstream_id, callback_url, created_at, delay_ms, outcome, status, view, credits, updated_at, next_poll_at)
       VALUES (@id, @kind, @user_id, @mode, @upstream_id, @callback_url, @created_at, @delay_ms, @outcome, @status, @view, @credits, @updated_at, @next_poll_at)`,
    ),
    task: db.prepare('SELECT * FROM proxy_tasks WHERE id = ?'),
    observe: db.prepare('UPDATE proxy_tasks SET status = ?, view = ?, updated_at = ? WHERE id = ?'),
    watched: db.prepare(
      `SELECT * FROM proxy_tasks WHERE callback_url IS NOT NULL AND status NOT IN (${TERMINAL}) AND created_at > ?`,
    ),
    claimPolls: db.prepare(
      `UPDATE proxy_tasks SET next_poll_at = @until
       WHERE mode = 'forward' AND callback_url IS NOT NULL AND status NOT IN (${TERMINAL}) AND created_at > @since AND next_poll_at <= @now
       RETURNING *`,
    ),
    deferPoll: db.prepare('UPDATE proxy_tasks SET next_poll_at = max(next_poll_at, @at) WHERE id = @id'),
    insertResult: db.prepare(
      `INSERT INTO proxy_results (name, task_id, position, creation_id, url, file, content_type, expires_at, size)
       VALUES (@name, @task_id, @position, @creation_id, @url, @file, @content_type, @expires_at, @size)`,
    ),
    storedBy: db.prepare(
      `SELECT coalesce(sum(r.size), 0) AS bytes, min(r.expires_at) AS first_expiry FROM proxy_results r JOIN proxy_tasks t ON t.id = r.task_id
       WHERE t.user_id = ? AND r.file IS NOT NULL AND r.expires_at > ?`,
    ),
    storedInAll: db.prepare(
      'SELECT coalesce(sum(size), 0) AS bytes, min(expires_at) AS first_expiry FROM proxy_results WHERE file IS NOT NULL AND expires_at > ?',
    ),
    results: db.prepare('SELECT * FROM proxy_results WHERE task_id = ? ORDER BY position'),
    result: db.prepare('SELECT * FROM proxy_results WHERE name = ?'),
    expired: db.prepare('SELECT * FROM proxy_results WHERE file IS NOT NULL AND expires_at <= ?'),
    forgetFile: db.prepare('UPDATE proxy_results SET file = NULL WHERE name = ?'),
    enqueue: db.prepare(
      `INSERT INTO proxy_deliveries (id, task_id, url, body, next_at, created_at, updated_at)
       VALUES (@id, @task_id, @url, @body, @next_at, @next_at, @next_at)`,
    ),
    claimDeliveries: db.prepare(
      `UPDATE proxy_deliveries SET lease_until = @until, lease_owner = @owner
       WHERE seq IN (SELECT d.seq FROM proxy_deliveries d
                     WHERE ${HEADS} AND d.next_at <= @now AND (d.lease_until IS NULL OR d.lease_until < @now)
                     ORDER BY d.seq LIMIT @limit)
       RETURNING *`,
    ),
    nextDeliveryAt: db.prepare(
      `SELECT MIN(MAX(d.next_at, COALESCE(d.lease_until, 0))) AS at FROM proxy_deliveries d WHERE ${HEADS}`,
    ),
    settle: db.prepare(
      `UPDATE proxy_deliveries SET state = ?, attempts = ?, next_at = ?, last_error = ?, updated_at = ?, lease_until = NULL, lease_owner = NULL
       WHERE id = ? AND lease_owner = ?`,
    ),
    release: db.prepare(
      'UPDATE proxy_deliveries SET lease_until = NULL, lease_owner = NULL WHERE id = ? AND lease_owner = ?',
    ),
    deliveries: db.prepare('SELECT * FROM proxy_deliveries WHERE task_id = ? ORDER BY seq'),
  };
}

export function createTaskStore(db: Db): TaskStore {
  const s = prepareStatements(db);
  // One process uses this database: each call is done when it returns; async only to match PostgreSQL.
  return {
    async createTask(task, result, callback, quota) {
      // IMMEDIATE: the write lock is taken before the quota is read, so a process sharing the file waits.
      return db
        .transaction((): QuotaRefusal | undefined => {
          if (result && quota) {
            const now = task.created_at;
            const user = s.storedBy.get(task.user_id, now) as StoredResults;
            if (user.bytes + result.size > quota.user) return { scope: 'user', stored: user };
            const total = s.storedInAll.get(now) as StoredResults;
            if (total.bytes + result.size > quota.total) return { scope: 'total', stored: total };
          }
          s.insertTask.run(task);
          if (result) s.insertResult.run(result);
          if (callback) s.enqueue.run(callback);
        })
        .immediate();
    },
    task: async (id) => s.task.get(id) as TaskRow | undefined,
    async update(id, now, decide) {
      return db.transaction(() => {
        const task = s.task.get(id) as TaskRow;
        const decision = decide(task, s.results.all(id) as ResultRow[]);
        if (decision.observe) s.observe.run(decision.observe.status, decision.observe.view, now, id);
        for (const callback of decision.callbacks) s.enqueue.run({ ...callback, task_id: id, next_at: now });
        return decision.value;
      })();
    },
    watched: async (since) => s.watched.all(since) as TaskRow[],
    claimPolls: async (since, now, interval) => s.claimPolls.all({ since, now, until: now + interval }) as TaskRow[],
    deferPoll: async (id, at) => void s.deferPoll.run({ id, at }),
    results: async (taskId) => s.results.all(taskId) as ResultRow[],
    result: async (name) => s.result.get(name) as ResultRow | undefined,
    expiredResults: async (now) => s.expired.all(now) as ResultRow[],
    forgetFile: async (name) => void s.forgetFile.run(name),
    claimDeliveries: async (now, until, owner, limit) =>
      (s.claimDeliveries.all({ now, until, owner, limit }) as DeliveryRow[]).sort((a, b) => a.seq - b.seq),
    nextDeliveryAt: async () => (s.nextDeliveryAt.get() as { at: number | null }).at ?? undefined,
    settle: async (id, owner, state, attempts, nextAt, error, now) =>
      void s.settle.run(state, attempts, nextAt, error, now, id, owner),
    release: async (id, owner) => void s.release.run(id, owner),
    deliveries: async (taskId) => s.deliveries.all(taskId) as DeliveryRow[],
  };
}
