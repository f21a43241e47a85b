import type { MemberRole, MemberRow } from './registry-store.js';

/** Members are read joined with their users, in the same columns by every store. */
export const MEMBER_SELECT = `SELECT m.id, m.publisher_id, m.role, m.created_at, u.id AS user_id, u.name AS user_name, u.email AS user_email
    FROM members m JOIN users u ON u.id = m.user_id`;

export const toMember = (row: Record<string, unknown>): MemberRow => ({
  id: row.id as string,
  publisher_id: row.publisher_id as string,
  role: row.role as MemberRole,
  created_at: row.created_at as string,
  user: { id: row.user_id as string, name: row.user_name as string, email: row.user_email as string | null },
});
