// Versioned schema changes, applied in order once each (PRAGMA user_version counts them).
// Append only: never edit a migration that has shipped.
export interface Migration {
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    // AI proxy (DESIGN.md §4): tasks, sandbox result files, and callback deliveries to resume after a restart.
    name: 'proxy tasks, results and callback deliveries',
    sql: `
      CREATE TABLE proxy_tasks (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        user_id TEXT NOT NULL,
        mode TEXT NOT NULL,
        upstream_id TEXT,
        callback_url TEXT,
        created_at INTEGER NOT NULL,
        delay_ms INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        status TEXT NOT NULL,
        view TEXT NOT NULL,
        credits INTEGER,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX proxy_tasks_user ON proxy_tasks(user_id);
      CREATE INDEX proxy_tasks_unfinished ON proxy_tasks(callback_url, status);

      CREATE TABLE proxy_results (
        name TEXT PRIMARY KEY,
        task_id TEXT NOT NULL REFERENCES proxy_tasks(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        creation_id TEXT NOT NULL,
        url TEXT,
        file TEXT,
        content_type TEXT,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX proxy_results_task ON proxy_results(task_id, position);
      CREATE INDEX proxy_results_expiry ON proxy_results(expires_at);

      CREATE TABLE proxy_deliveries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        task_id TEXT NOT NULL REFERENCES proxy_tasks(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        body TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        next_at INTEGER NOT NULL,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX proxy_deliveries_pending ON proxy_deliveries(state, task_id, seq);
    `,
  },
];
