// A publisher's webhooks (src/contract/webhooks.ts): owners and admins add, list and remove them; the
// secret is made here and answered once. Deliveries are webhooks/deliveries.ts's.
import { randomBytes, randomUUID } from 'node:crypto';
import type * as z from 'zod';
import { type AddWebhookBody, type CreatedWebhook, type Webhook, WEBHOOKS_MAX } from '../../contract/webhooks.js';
import { accessTo, allowMutation, requirePublisher } from '../access.js';
import { badRequest, conflict, notFound } from '../errors.js';
import type { Principal } from '../route.js';
import type { RegistryStore } from '../store/registry-store.js';
import type { WebhookRow } from '../store/webhooks.js';
import { refusedTarget } from '../webhooks/targets.js';

async function ownedPublisher(store: RegistryStore, principal: Principal, publisherId: string) {
  const publisher = await requirePublisher(store, publisherId);
  allowMutation(await accessTo(store, principal, publisher.id), 'owner', publisher);
  return publisher;
}

export const webhookView = ({ id, publisher_id, url, events, created_at }: WebhookRow): Webhook => ({
  id,
  publisher_id,
  url,
  events: events as Webhook['events'],
  created_at,
});

export async function listWebhooks(store: RegistryStore, principal: Principal, publisherId: string) {
  const publisher = await ownedPublisher(store, principal, publisherId);
  return (await store.listWebhooks(publisher.id)).map(webhookView);
}

export async function addWebhook(
  deps: { store: RegistryStore; allowPrivate: boolean },
  principal: Principal,
  publisherId: string,
  body: () => z.output<typeof AddWebhookBody>,
): Promise<CreatedWebhook> {
  const publisher = await ownedPublisher(deps.store, principal, publisherId);
  const input = body();
  const refused = refusedTarget(input.url, deps.allowPrivate);
  if (refused) throw badRequest(refused, [{ path: 'url', message: refused }]);
  if ((await deps.store.listWebhooks(publisher.id)).length >= WEBHOOKS_MAX)
    throw conflict(
      `publisher ${publisher.id} has ${WEBHOOKS_MAX} webhooks already`,
      `remove one first (\`nodereg publisher webhook list ${publisher.id}\`)`,
    );
  const row: WebhookRow = {
    id: randomUUID(),
    publisher_id: publisher.id,
    url: input.url,
    events: [...new Set(input.events)],
    secret: `whsec_${randomBytes(24).toString('hex')}`,
    created_by: principal.userId,
    created_at: new Date().toISOString(),
  };
  await deps.store.addWebhook(row);
  return { ...webhookView(row), secret: row.secret };
}

export async function removeWebhook(store: RegistryStore, principal: Principal, publisherId: string, id: string) {
  const publisher = await ownedPublisher(store, principal, publisherId);
  if (!(await store.removeWebhook(publisher.id, id)))
    throw notFound(
      `publisher ${publisher.id} has no webhook ${id} (\`nodereg publisher webhook list ${publisher.id}\` lists them)`,
    );
}
