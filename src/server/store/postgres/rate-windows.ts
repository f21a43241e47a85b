// The rate limit of a fleet on PostgreSQL: one upsert per request counts it in its caller's minute.
// The rows of earlier minutes are dropped on a new minute's first count.
import type postgres from 'postgres';
import type { RegistryStore } from '../registry-store.js';
import { count, only } from '../rows.js';

export function postgresRateWindows(sql: postgres.Sql): Required<Pick<RegistryStore, 'countRequest'>> {
  let prunedBefore = 0;
  return {
    async countRequest(key, window) {
      if (window > prunedBefore) {
        prunedBefore = window;
        await sql`DELETE FROM rate_windows WHERE win < ${window}`;
      }
      return only(
        await sql`INSERT INTO rate_windows (key, win, used) VALUES (${key}, ${window}, 1)
          ON CONFLICT (key) DO UPDATE SET used = CASE WHEN rate_windows.win = excluded.win THEN rate_windows.used + 1 ELSE 1 END,
          win = excluded.win RETURNING used`,
        (row) => count(row, 'used'),
        'the request count',
      );
    },
  };
}
