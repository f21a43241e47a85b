// A user's lifecycle on PostgreSQL (store/user-lifecycle.ts): each change's statements run in one transaction.
import type postgres from 'postgres';
import { count, decodeUser, only, type Row } from '../rows.js';
import {
  deleteUserSteps,
  setUserDisabledSteps,
  USER_ROWS,
  type Steps,
  type UserLifecycleStore,
} from '../user-lifecycle.js';
import { now } from './columns.js';
import { numbered } from '../audit.js';

async function run<R>(sql: postgres.Sql, steps: Steps<R>): Promise<R> {
  return sql.begin(async (tx) => {
    let next = steps.next([]);
    while (!next.done) {
      const rows: Row[] = await tx.unsafe(
        numbered(next.value.sql),
        next.value.params as postgres.ParameterOrJSON<never>[],
      );
      next = steps.next(rows);
    }
    return next.value;
  }) as Promise<R>;
}

export function postgresUserLifecycleStore(sql: postgres.Sql): UserLifecycleStore {
  return {
    async listUsers({ offset, limit }) {
      const rows = (await sql.unsafe(numbered(USER_ROWS.page), [limit, offset])).map(decodeUser);
      const total = only(await sql.unsafe(USER_ROWS.count), (row) => count(row, 'total'), 'the users');
      return { rows, total };
    },
    setUserDisabled: (id, disabled, by) => run(sql, setUserDisabledSteps(id, disabled, by, now())),
    deleteUser: (id, fate, by) => run(sql, deleteUserSteps(id, fate, by, now())),
  };
}
