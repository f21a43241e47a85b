import * as z from 'zod';
import {
  DESCRIPTION_MAX,
  MEMBER_ROLES,
  NAME_MAX,
  PAGE,
  PUBLISHER_STATUS,
  SHORT_TEXT_MAX,
  USER_REF_MAX,
} from '../limits.js';
import { rule, text, urlField } from '../fields.js';
import { answered, answeredFields, clearable, isoDate, pageNumber, publisherId, queryInteger } from './fields.js';

// Parsed leniently as the server answers it: unknown fields kept.
export const PublisherMember = z.looseObject({
  id: z.string(),
  role: z.string(),
  user: z.looseObject({ email: z.string().optional(), id: z.string(), name: z.string().optional() }),
});
export type PublisherMember = z.infer<typeof PublisherMember>;

export const Publisher = z.looseObject({
  id: z.string(),
  name: answered,
  createdAt: isoDate.optional(),
  description: answered,
  logo: answered,
  members: z.array(PublisherMember).optional(),
  source_code_repo: answered,
  status: z.enum(PUBLISHER_STATUS).optional(),
  support: answered,
  website: answered,
});
export type Publisher = z.infer<typeof Publisher>;
export const PUBLISHER_ANSWERED_FIELDS = answeredFields(Publisher);

/** Publisher metadata its owners may write. */
export const PublisherWritable = z.object({
  name: clearable(text(NAME_MAX)),
  description: clearable(text(DESCRIPTION_MAX)),
  logo: clearable(urlField),
  source_code_repo: clearable(urlField),
  support: clearable(text(SHORT_TEXT_MAX)),
  website: clearable(urlField),
});
export const PUBLISHER_WRITABLE_FIELDS = Object.keys(
  PublisherWritable.shape,
) as (keyof typeof PublisherWritable.shape)[];

export const PublisherInput = z.object({
  id: publisherId.optional(),
  ...PublisherWritable.shape,
  status: z.enum(PUBLISHER_STATUS).optional(),
  // members have their own routes; createdAt is server-set
  members: z.unknown().optional(),
  createdAt: z.unknown().optional(),
});
export type PublisherInput = z.infer<typeof PublisherInput>;

export const CreatePublisherBody = PublisherInput.extend({ id: publisherId, name: text(NAME_MAX).min(1).optional() });
export type CreatePublisherBody = z.input<typeof CreatePublisherBody>;

// A publisher's nodes were answered all at once: a page of the most by default keeps that answer for up to 100.
export const PublisherNodesQuery = z.object({
  page: pageNumber,
  limit: queryInteger(PAGE.limitMin, PAGE.limitMax).prefault(String(PAGE.limitMax)),
});

/**
 * Adding a member invites a user, named by what the owner knows: `user` (an id, an e-mail or a user
 * name); `user_id` is the older name of the same field. The user joins once they accept.
 */
export const AddMemberBody = rule(
  z.object({
    user: z.string().min(1).max(USER_REF_MAX).optional().describe('the user to invite: their id, e-mail or user name'),
    user_id: z.string().min(1).max(USER_REF_MAX).optional().describe('the same as `user` (older name)'),
    role: z.enum(MEMBER_ROLES).default('member'),
  }),
  'namesUser',
  'name the user to invite: its id, e-mail or user name',
  ['user'],
);

/**
 * An invitation to join a publisher. `status` is `pending` until the user accepts; `member` when the
 * user already was a member and only their role changed (no consent needed for that). Never an e-mail.
 * An invitation of an e-mail address names no user and has no time: its answer is the same whether an
 * account has the address or not (it becomes that user's invitation when they appear).
 */
export const Invitation = z.looseObject({
  publisher: z.looseObject({ id: z.string(), name: z.string().optional() }),
  user: z.looseObject({ id: z.string(), name: z.string() }).optional(),
  role: z.enum(MEMBER_ROLES),
  invited_by: z.looseObject({ id: z.string(), name: z.string() }).optional(),
  status: z.enum(['pending', 'member']),
  created_at: isoDate.optional(),
});
export type Invitation = z.infer<typeof Invitation>;
