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

/** `?` placeholders numbered as PostgreSQL takes them. */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

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
    setUserDisabled: (id, disabled) => run(sql, setUserDisabledSteps(id, disabled, now())),
    deleteUser: (id, fate) => run(sql, deleteUserSteps(id, fate, now())),
  };
}
