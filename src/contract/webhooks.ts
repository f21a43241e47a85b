// A publisher's webhooks (issue 36): signed POSTs to the publisher's receivers when one of its versions
// is published (its archive arrived) or its status changes. Owners and admins manage them.
import * as z from 'zod';
import { rule } from './fields.js';
import { WEBHOOK_EVENTS } from './limits.js';
import { op } from './operation.js';
import { isoDate } from './resources/fields.js';

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** Receivers a publisher may have. */
export const WEBHOOKS_MAX = 20;
export const WEBHOOK_URL_MAX = 2048;

const httpUrl = rule(z.string().max(WEBHOOK_URL_MAX), 'webhookUrl', 'must be an http:// or https:// URL');

export const AddWebhookBody = z.object({
  url: httpUrl.describe('where the events are POSTed'),
  events: z
    .array(z.enum(WEBHOOK_EVENTS))
    .min(1)
    .default([...WEBHOOK_EVENTS])
    .describe('the events sent (all by default)'),
});

export const Webhook = z.looseObject({
  id: z.string(),
  publisher_id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  created_at: isoDate,
});
export type Webhook = z.infer<typeof Webhook>;

/** A webhook as made: with the secret its deliveries are signed with, shown this once. */
export const CreatedWebhook = Webhook.extend({
  secret: z
    .string()
    .describe('X-Nodereg-Signature is `sha256=` and the HMAC-SHA256 of the raw body with this secret (as UTF-8)'),
});
export type CreatedWebhook = z.infer<typeof CreatedWebhook>;

/** What a delivery's body holds; X-Nodereg-Event names the event and X-Nodereg-Delivery the delivery. */
export interface WebhookPayload {
  event: WebhookEvent;
  publisher_id: string;
  node_id: string;
  version: string;
  status: string;
  previous_status?: string;
  at: string;
}

export const listWebhooks = op({
  id: 'listWebhooks',
  method: 'GET',
  path: '/publishers/{publisherId}/webhooks',
  summary: "A publisher's webhooks, without their secrets (owners and admins)",
  auth: 'user',
  response: z.array(Webhook),
});
export const addWebhook = op({
  id: 'addWebhook',
  method: 'POST',
  path: '/publishers/{publisherId}/webhooks',
  summary:
    'Send signed POSTs to a URL when a version of the publisher is published or changes status; answers the secret once (owners and admins)',
  auth: 'user',
  body: AddWebhookBody,
  status: 201,
  response: CreatedWebhook,
});
export const removeWebhook = op({
  id: 'removeWebhook',
  method: 'DELETE',
  path: '/publishers/{publisherId}/webhooks/{webhookId}',
  summary: 'Stop sending events to a webhook (owners and admins)',
  auth: 'user',
  status: 204,
});

export const webhookOperations = [listWebhooks, addWebhook, removeWebhook];
