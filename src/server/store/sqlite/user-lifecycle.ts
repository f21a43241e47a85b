// A user's lifecycle on SQLite (store/user-lifecycle.ts): each change's statements run in one write transaction.
import type { Row } from '../rows.js';
import { count, decodeUser, only } from '../rows.js';
import {
  deleteUserSteps,
  setUserDisabledSteps,
  USER_ROWS,
  type Steps,
  type UserLifecycleStore,
} from '../user-lifecycle.js';
import { now, type SqliteAccess } from './access.js';

/** Runs every statement of `steps` (the write lock, taken when the transaction began, covers the row locks). */
function run<R>(access: SqliteAccess, steps: Steps<R>): R {
  let next = steps.next([]);
  while (!next.done) {
    const { sql, params, lock } = next.value;
    const statement = lock ? undefined : access.prepare(sql);
    const rows: Row[] = !statement
      ? []
      : statement.reader
        ? access.all(sql, ...params)
        : (statement.run(...params), []);
    next = steps.next(rows);
  }
  return next.value;
}

export function sqliteUserLifecycleStore(access: SqliteAccess): UserLifecycleStore {
  const running = access.writing(<R>(steps: Steps<R>) => run(access, steps));
  return {
    async listUsers({ offset, limit }) {
      const rows = access.all(USER_ROWS.page, limit, offset).map(decodeUser);
      return { rows, total: only(access.all(USER_ROWS.count), (row) => count(row, 'total'), 'the users') };
    },
    setUserDisabled: async (id, disabled, by) => running(setUserDisabledSteps(id, disabled, by, now())),
    deleteUser: async (id, fate, by) => running(deleteUserSteps(id, fate, by, now())),
  };
}
