// A user's lifecycle after creation (the [operate] issue): listed, disabled, enabled and deleted by an
// admin. Both stores run the same steps: each change is a generator of SQL statements (written with
// `?`, numbered for PostgreSQL by the driver) that one transaction runs, synchronously on SQLite and
// awaited on PostgreSQL, so the rules (never the last admin, never a publisher left without an owner)
// are written once.
import type { Page, UserRow } from './registry-store.js';
import { auditInsert } from './audit.js';
import { decodeUser, only, text, type Row } from './rows.js';

/** What deleting a user does with their memberships and invitations. */
export type MembershipFate = { transferTo: string } | 'remove';

export type DisableOutcome = UserRow | 'not-found' | 'last-admin';
export type DeleteOutcome =
  | { kind: 'deleted'; user: UserRow }
  | 'not-found'
  | 'last-admin'
  /** Removing the memberships would leave these publishers without an owner. */
  | { kind: 'sole-owner'; publishers: string[] };

export interface UserLifecycleStore {
  /** Users not deleted, oldest first. */
  listUsers(query: { offset: number; limit: number }): Promise<Page<UserRow>>;
  /**
   * Disables (or enables) a user: their tokens are refused while disabled. 'last-admin' when that
   * would leave no enabled admin.
   */
  setUserDisabled(id: string, disabled: boolean, by: string | null): Promise<DisableOutcome>;
  /**
   * Deletes a user in one transaction: their memberships move to `transferTo` (who keeps the higher of
   * the two roles) or go, their invitations go, every token they made is revoked and their sessions
   * end; the row stays (reviews and records name it) with the e-mail cleared, marked deleted.
   * Each change writes its audit entry (by `by`) in its transaction.
   */
  deleteUser(id: string, fate: MembershipFate, by: string | null): Promise<DeleteOutcome>;
}

/** One statement of a step: `lock` statements only take row locks (PostgreSQL); SQLite's write lock is already held. */
export interface Statement {
  sql: string;
  params: unknown[];
  lock?: boolean;
}
/** A change as the statements it runs: each `yield` answers the statement's rows. */
export type Steps<R> = Generator<Statement, R, Row[]>;

const LIVE = 'deleted_at IS NULL';
const ENABLED_ADMINS = `SELECT id FROM users WHERE admin IS TRUE AND disabled_at IS NULL AND ${LIVE}`;

const q = (sql: string, ...params: unknown[]): Statement => ({ sql, params });
const lock = (sql: string, ...params: unknown[]): Statement => ({ sql: `${sql} FOR UPDATE`, params, lock: true });

/** The live user, or undefined. */
function* liveUser(id: string): Steps<UserRow | undefined> {
  const rows = yield q(`SELECT * FROM users WHERE id = ? AND ${LIVE}`, id);
  return rows.length ? decodeUser(rows[0]) : undefined;
}

/**
 * Locks the enabled admins, then the user (always in that order, so that two changes never wait for
 * each other), and reads the user.
 */
function* lockedUser(id: string): Steps<UserRow | undefined> {
  yield lock(`${ENABLED_ADMINS} ORDER BY id`);
  yield lock('SELECT id FROM users WHERE id = ?', id);
  return yield* liveUser(id);
}

/** Whether taking `user` out of the enabled admins leaves none (they are locked: lockedUser). */
function* lastAdmin(user: UserRow): Steps<boolean> {
  if (!user.admin || user.disabled_at) return false;
  const admins = yield q(ENABLED_ADMINS);
  return admins.every((row) => text(row, 'id') === user.id);
}

export function* setUserDisabledSteps(
  id: string,
  disabled: boolean,
  by: string | null,
  at: string,
): Steps<DisableOutcome> {
  const user = yield* lockedUser(id);
  if (!user) return 'not-found';
  if (disabled && (yield* lastAdmin(user))) return 'last-admin';
  if (Boolean(user.disabled_at) !== disabled) {
    yield q('UPDATE users SET disabled_at = ? WHERE id = ?', disabled ? at : null, id);
    yield auditInsert({ actorId: by, action: disabled ? 'user.disable' : 'user.enable', target: `user:${id}` }, at);
  }
  return only(yield q('SELECT * FROM users WHERE id = ?', id), decodeUser, `user ${id}`);
}

/** The publishers `id` is the only owner of (their rows locked first, as removeMember locks one). */
function* soleOwned(id: string): Steps<string[]> {
  yield lock(
    'SELECT id FROM publishers WHERE id IN (SELECT publisher_id FROM members WHERE user_id = ?) ORDER BY id',
    id,
  );
  const rows = yield q(
    `SELECT m.publisher_id FROM members m WHERE m.user_id = ? AND m.role = 'owner'
       AND (SELECT count(*) FROM members o WHERE o.publisher_id = m.publisher_id AND o.role = 'owner') = 1
     ORDER BY m.publisher_id`,
    id,
  );
  return rows.map((row) => text(row, 'publisher_id'));
}

/** Moves `from`'s memberships to `to`: a member of both keeps the higher role; `to`'s invitations there go. */
function* transferMemberships(from: string, to: string): Steps<void> {
  yield q(
    `UPDATE members SET role = 'owner' WHERE user_id = ? AND role = 'member'
       AND publisher_id IN (SELECT publisher_id FROM members WHERE user_id = ? AND role = 'owner')`,
    to,
    from,
  );
  yield q(
    'UPDATE members SET user_id = ? WHERE user_id = ? AND publisher_id NOT IN (SELECT publisher_id FROM members WHERE user_id = ?)',
    to,
    from,
    to,
  );
  yield q(
    'DELETE FROM invitations WHERE user_id = ? AND publisher_id IN (SELECT publisher_id FROM members WHERE user_id = ?)',
    to,
    to,
  );
}

export function* deleteUserSteps(
  id: string,
  fate: MembershipFate,
  by: string | null,
  at: string,
): Steps<DeleteOutcome> {
  const user = yield* lockedUser(id);
  if (!user) return 'not-found';
  if (yield* lastAdmin(user)) return 'last-admin';
  const sole = yield* soleOwned(id);
  if (fate === 'remove' && sole.length) return { kind: 'sole-owner', publishers: sole };
  if (fate !== 'remove') yield* transferMemberships(id, fate.transferTo);
  yield q('DELETE FROM members WHERE user_id = ?', id);
  yield q('DELETE FROM invitations WHERE user_id = ?', id);
  yield q('UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL', at, id);
  yield q('DELETE FROM web_sessions WHERE user_id = ?', id);
  yield q('UPDATE users SET deleted_at = ?, email = NULL WHERE id = ?', at, id);
  const details = fate === 'remove' ? { memberships: 'removed' } : { transfer_to: fate.transferTo };
  yield auditInsert({ actorId: by, action: 'user.delete', target: `user:${id}`, details }, at);
  return { kind: 'deleted', user: only(yield q('SELECT * FROM users WHERE id = ?', id), decodeUser, `user ${id}`) };
}

export const USER_ROWS = {
  page: `SELECT * FROM users WHERE ${LIVE} ORDER BY created_at, id LIMIT ? OFFSET ?`,
  count: `SELECT count(*) AS total FROM users WHERE ${LIVE}`,
} as const;

/** The columns SQLite adds (migration 'user-lifecycle'); PostgreSQL's migration adds them only where missing. */
export const USER_LIFECYCLE_COLUMNS = `
ALTER TABLE users ADD COLUMN disabled_at TEXT;
ALTER TABLE users ADD COLUMN deleted_at TEXT;
`;
