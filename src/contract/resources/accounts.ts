import * as z from 'zod';
import { NAME_MAX } from '../limits.js';
import { text } from '../fields.js';
import { isoDate } from './fields.js';

export const User = z.looseObject({
  id: z.string(),
  name: z.string(),
  email: z.string().optional(),
  admin: z.boolean().optional(),
  /** True while an admin has the account disabled (its tokens are refused). */
  disabled: z.boolean().optional(),
  created_at: isoDate.optional(),
});
export type User = z.infer<typeof User>;

/** A page of users (admins' `GET /users`). */
export const UserPage = z.looseObject({
  users: z.array(User),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  totalPages: z.number().int(),
});

/**
 * What deleting a user does with their memberships: `transfer_to` (a user named by id, e-mail or name)
 * takes them over, or `remove_memberships=true` drops them. One of the two is needed when they have any.
 */
export const DeleteUserQuery = z.object({
  transfer_to: z.string().min(1).max(320).optional(),
  remove_memberships: z.enum(['true', 'false']).optional(),
});

export const Me = z.union([
  z.looseObject({
    kind: z.literal('user'),
    user: User,
    publishers: z.array(z.looseObject({ id: z.string(), role: z.string() })),
  }),
  z.looseObject({
    kind: z.literal('pat'),
    publisher: z.looseObject({ id: z.string() }),
    token: z.looseObject({ id: z.string(), name: z.string() }),
    user: z.looseObject({ id: z.string(), name: z.string() }),
  }),
]);
export type Me = z.infer<typeof Me>;

/** An e-mail address, as a user's is written and as an invitation by address names one. */
export const EmailAddress = z.email();
export const isEmailAddress = (text: string) => EmailAddress.safeParse(text).success;

export const CreateUserBody = z.object({
  name: text(NAME_MAX).min(1),
  email: EmailAddress.optional(),
  admin: z.boolean().optional(),
});
export const CreateTokenBody = z.object({ name: text(NAME_MAX).min(1).default('token') });
export const CreatedToken = z.looseObject({
  id: z.string(),
  name: z.string(),
  created_at: isoDate,
  token: z.string(),
});
export const CreatedUser = z.looseObject({ user: User, token: z.string() });
export const TokenInfo = z.looseObject({
  id: z.string(),
  name: z.string(),
  /** In an admin's list of a user's tokens: a user token, or a publisher's access token they made. */
  kind: z.enum(['user', 'pat']).optional(),
  publisher_id: z.string().nullable().optional(),
  created_at: isoDate,
  last_used_at: isoDate.nullable().optional(),
  prefix: z.string(),
});
export const TokenList = z.array(TokenInfo);

/** One entry of the audit log: who (`actor_id`, null for the registry itself) did what to what, and when. */
export const AuditEntry = z.looseObject({
  id: z.string(),
  at: isoDate,
  actor_id: z.string().nullable(),
  action: z.string(),
  target: z.string(),
  details: z.record(z.string(), z.unknown()),
});
export const AuditPage = z.looseObject({
  entries: z.array(AuditEntry),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  totalPages: z.number().int(),
});
