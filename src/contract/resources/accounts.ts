import * as z from 'zod';
import { NAME_MAX } from '../limits.js';
import { text } from '../fields.js';
import { isoDate } from './fields.js';

export const User = z.looseObject({
  id: z.string(),
  name: z.string(),
  email: z.string().optional(),
  admin: z.boolean().optional(),
});
export type User = z.infer<typeof User>;

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
  created_at: isoDate,
  last_used_at: isoDate.nullable().optional(),
  prefix: z.string(),
});
export const TokenList = z.array(TokenInfo);
