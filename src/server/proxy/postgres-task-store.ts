// The AI proxy's tasks, results and callback deliveries in PostgreSQL (migration 'proxy'), shared by
// every instance: a task's changes are decided under its row lock, and polls and deliveries are
// claimed with `FOR UPDATE SKIP LOCKED`, so no two instances work on one at the same time.
import type { Sql, TransactionSql } from 'postgres';
import { TERMINAL_STATUSES } from './kinds.js';
import type {
  DeliveryRow,
  NewDelivery,
  QuotaRefusal,
  ResultRow,
  StoredResults,
  TaskDecision,
  TaskRow,
  TaskStore,
} from './store.js';

// bigint columns (times in ms) arrive as strings: numbers here.
const TASK_NUMBERS = ['created_at', 'delay_ms', 'credits', 'updated_at', 'next_poll_at'] as const;
const RESULT_NUMBERS = ['position', 'expires_at', 'size'] as const;
const DELIVERY_NUMBERS = ['seq', 'attempts', 'next_at', 'lease_until'] as const;

function numbers<T>(row: Record<string, unknown>, keys: readonly string[]): T {
  const out = { ...row };
  for (const key of keys) if (out[key] !== null && out[key] !== undefined) out[key] = Number(out[key]);
  return out as T;
}
const task = (row: Record<string, unknown>) => numbers<TaskRow>(row, TASK_NUMBERS);
const result = (row: Record<string, unknown>) => numbers<ResultRow>(row, RESULT_NUMBERS);
const delivery = (row: Record<string, unknown>) => numbers<DeliveryRow>(row, DELIVERY_NUMBERS);

/** The advisory lock that sandbox quota checks take in turn (any number no other lock of ours uses). */
const QUOTA_LOCK = 7_411_203;

/** Bytes of unexpired result files, of one user or of all, and when the first of them expires. */
async function stored(tx: TransactionSql, now: number, userId?: string): Promise<StoredResults> {
  const [row] =
    userId === undefined
      ? await tx`SELECT coalesce(sum(size), 0) AS bytes, min(expires_at) AS first_expiry FROM proxy_results WHERE file IS NOT NULL AND expires_at > ${now}`
      : await tx`
          SELECT coalesce(sum(r.size), 0) AS bytes, min(r.expires_at) AS first_expiry FROM proxy_results r JOIN proxy_tasks t ON t.id = r.task_id
          WHERE t.user_id = ${userId} AND r.file IS NOT NULL AND r.expires_at > ${now}`;
  return { bytes: Number(row.bytes), first_expiry: row.first_expiry === null ? null : Number(row.first_expiry) };
}

export function createPostgresTaskStore(sql: Sql): TaskStore {
  const insertDelivery = (tx: TransactionSql, row: NewDelivery) =>
    tx`INSERT INTO proxy_deliveries (id, task_id, url, body, next_at, created_at, updated_at)
       VALUES (${row.id}, ${row.task_id}, ${row.url}, ${row.body}, ${row.next_at}, ${row.next_at}, ${row.next_at})`;

  // The oldest pending delivery of each task (a task's callbacks go out in order), due and not leased.
  const heads = () => sql`
    d.state = 'pending'
    AND d.seq = (SELECT MIN(p.seq) FROM proxy_deliveries p WHERE p.task_id = d.task_id AND p.state = 'pending')`;

  return {
    async createTask(row, firstResult, firstCallback, quota) {
      return sql.begin(async (tx): Promise<QuotaRefusal | undefined> => {
        if (firstResult && quota) {
          // One quota check at a time, on every instance: each sees the results the ones before it kept.
          await tx`SELECT pg_advisory_xact_lock(${QUOTA_LOCK})`;
          const user = await stored(tx, row.created_at, row.user_id);
          if (user.bytes + firstResult.size > quota.user) return { scope: 'user', stored: user };
          const total = await stored(tx, row.created_at);
          if (total.bytes + firstResult.size > quota.total) return { scope: 'total', stored: total };
        }
        await tx`INSERT INTO proxy_tasks ${tx(row as unknown as Record<string, unknown>)}`;
        if (firstResult) await tx`INSERT INTO proxy_results ${tx(firstResult as unknown as Record<string, unknown>)}`;
        if (firstCallback) await insertDelivery(tx, firstCallback);
      }) as Promise<QuotaRefusal | undefined>;
    },

    async task(id) {
      const [row] = await sql`SELECT * FROM proxy_tasks WHERE id = ${id}`;
      return row && task(row);
    },

    async update<T>(id: string, now: number, decide: (task: TaskRow, results: ResultRow[]) => TaskDecision<T>) {
      const outcome: { value?: T } = {};
      await sql.begin(async (tx) => {
        const [locked] = await tx`SELECT * FROM proxy_tasks WHERE id = ${id} FOR UPDATE`;
        const current = task(locked);
        const results = (await tx`SELECT * FROM proxy_results WHERE task_id = ${id} ORDER BY position`).map(result);
        const decision = decide(current, results);
        if (decision.observe) {
          await tx`UPDATE proxy_tasks SET status = ${decision.observe.status}, view = ${decision.observe.view}, updated_at = ${now} WHERE id = ${id}`;
        }
        for (const body of decision.callbacks) await insertDelivery(tx, { ...body, task_id: id, next_at: now });
        outcome.value = decision.value;
      });
      return outcome.value as T;
    },

    async watched(since) {
      const rows = await sql`
        SELECT * FROM proxy_tasks
        WHERE callback_url IS NOT NULL AND status NOT IN ${sql(TERMINAL_STATUSES as unknown as string[])} AND created_at > ${since}`;
      return rows.map(task);
    },

    async claimPolls(since, now, interval) {
      const rows = await sql`
        UPDATE proxy_tasks SET next_poll_at = ${now + interval}
        WHERE id IN (
          SELECT id FROM proxy_tasks
          WHERE mode = 'forward' AND callback_url IS NOT NULL AND status NOT IN ${sql(TERMINAL_STATUSES as unknown as string[])}
            AND created_at > ${since} AND next_poll_at <= ${now}
          FOR UPDATE SKIP LOCKED)
        RETURNING *`;
      return rows.map(task);
    },

    async deferPoll(id, at) {
      await sql`UPDATE proxy_tasks SET next_poll_at = GREATEST(next_poll_at, ${at}) WHERE id = ${id}`;
    },

    async results(taskId) {
      return (await sql`SELECT * FROM proxy_results WHERE task_id = ${taskId} ORDER BY position`).map(result);
    },

    async result(name) {
      const [row] = await sql`SELECT * FROM proxy_results WHERE name = ${name}`;
      return row && result(row);
    },

    async expiredResults(now) {
      return (await sql`SELECT * FROM proxy_results WHERE file IS NOT NULL AND expires_at <= ${now}`).map(result);
    },

    async forgetFile(name) {
      await sql`UPDATE proxy_results SET file = NULL WHERE name = ${name}`;
    },

    async claimDeliveries(now, leaseUntil, owner, limit) {
      const rows = await sql`
        UPDATE proxy_deliveries SET lease_until = ${leaseUntil}, lease_owner = ${owner}
        WHERE seq IN (
          SELECT d.seq FROM proxy_deliveries d
          WHERE ${heads()} AND d.next_at <= ${now} AND (d.lease_until IS NULL OR d.lease_until < ${now})
          ORDER BY d.seq LIMIT ${limit}
          FOR UPDATE SKIP LOCKED)
        RETURNING *`;
      return rows.map(delivery).sort((a, b) => a.seq - b.seq);
    },

    async nextDeliveryAt() {
      const [row] = await sql`
        SELECT MIN(GREATEST(d.next_at, COALESCE(d.lease_until, 0))) AS at FROM proxy_deliveries d WHERE ${heads()}`;
      return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
    },

    async settle(id, owner, state, attempts, nextAt, error, now) {
      await sql`
        UPDATE proxy_deliveries
        SET state = ${state}, attempts = ${attempts}, next_at = ${nextAt}, last_error = ${error}, updated_at = ${now}, lease_until = NULL, lease_owner = NULL
        WHERE id = ${id} AND lease_owner = ${owner}`;
    },

    async release(id, owner) {
      await sql`UPDATE proxy_deliveries SET lease_until = NULL, lease_owner = NULL WHERE id = ${id} AND lease_owner = ${owner}`;
    },

    async deliveries(taskId) {
      return (await sql`SELECT * FROM proxy_deliveries WHERE task_id = ${taskId} ORDER BY seq`).map(delivery);
    },
  };
}
