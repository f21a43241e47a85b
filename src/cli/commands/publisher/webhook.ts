// `nodereg publisher webhook add|list|remove`: where a publisher's version events are POSTed, signed
// (src/contract/webhooks.ts). Registered under `publisher` by commands/publisher.ts.
import { type Command, Option } from 'commander';
import { routes } from '../../../client/routes.js';
import { WEBHOOK_EVENTS } from '../../../contract/limits.js';
import type { Ctx } from '../../context.js';
import { invalidInput, toCliError } from '../../errors.js';
import { examples } from '../../examples.js';
import { relativeTime, table } from '../../output.js';
import { checkPublisherId } from '../../resolve.js';

const ownerOnly = (id: string) => ({ 403: `only an owner of ${id} (or an admin) may manage its webhooks` });

/** `--events a,b` as the list the contract takes; each must be one of WEBHOOK_EVENTS. */
function parseEvents(text: string): (typeof WEBHOOK_EVENTS)[number][] {
  const events = text.split(',').map((event) => event.trim());
  const unknown = events.find((event) => !(WEBHOOK_EVENTS as readonly string[]).includes(event));
  if (unknown !== undefined)
    throw invalidInput(`invalid --events: "${unknown}"`, `give a comma-separated list of ${WEBHOOK_EVENTS.join(', ')}`);
  return events as (typeof WEBHOOK_EVENTS)[number][];
}

function registerAdd(webhook: Command, ctx: Ctx): void {
  examples(
    webhook
      .command('add <id> <url>')
      .description(
        "POST the publisher's version events to URL, signed: X-Nodereg-Signature is sha256= and the HMAC-SHA256 of the body with the secret shown once",
      )
      .addOption(new Option('--events <list>', `the events sent, comma-separated: ${WEBHOOK_EVENTS.join(', ')}`))
      .action(async (id: string, url: string, o: { events?: string }) => {
        await checkPublisherId(id, '<id>');
        const body = { url, ...(o.events ? { events: parseEvents(o.events) } : {}) };
        const client = await ctx.client({ requireToken: true });
        const added = await client.call(routes.addWebhook, { params: { publisherId: id }, body }).catch((error) => {
          throw toCliError(error, ownerOnly(id));
        });
        ctx.out.result(
          added,
          `added webhook ${added.id} of ${id}: ${added.events.join(', ')} to ${added.url}\nsecret (shown once): ${added.secret}`,
        );
      }),
    [
      'nodereg publisher webhook add acme https://ci.acme.example/nodereg',
      'nodereg publisher webhook add acme https://hooks.acme.example/ --events version.published',
    ],
  );
}

export function registerWebhookCommands(publisher: Command, ctx: Ctx): void {
  const webhook = examples(
    publisher
      .command('webhook')
      .description("where a publisher's version events (published, status changed) are sent (owners and admins)"),
    ['nodereg publisher webhook add acme https://ci.acme.example/nodereg', 'nodereg publisher webhook list acme'],
  );
  registerAdd(webhook, ctx);
  examples(
    webhook
      .command('list <id>')
      .description("list a publisher's webhooks (never their secrets)")
      .action(async (id: string) => {
        await checkPublisherId(id, '<id>');
        const client = await ctx.client({ requireToken: true });
        const hooks = await client.call(routes.listWebhooks, { params: { publisherId: id } }).catch((error) => {
          throw toCliError(error, ownerOnly(id));
        });
        ctx.out.result(hooks, () =>
          hooks.length
            ? table(
                hooks.map((h) => [h.id, h.url, h.events.join(','), relativeTime(h.created_at)]),
                ['ID', 'URL', 'EVENTS', 'ADDED'],
              )
            : `${id} has no webhooks`,
        );
      }),
    ['nodereg publisher webhook list acme'],
  );
  examples(
    webhook
      .command('remove <id> <webhookId>')
      .description('stop sending events to a webhook')
      .action(async (id: string, webhookId: string) => {
        await checkPublisherId(id, '<id>');
        const client = await ctx.client({ requireToken: true });
        await client.call(routes.removeWebhook, { params: { publisherId: id, webhookId } }).catch((error) => {
          throw toCliError(error, {
            ...ownerOnly(id),
            404: `${id} has no webhook ${webhookId} (\`nodereg publisher webhook list ${id}\` lists them)`,
          });
        });
        ctx.out.result(
          { publisher_id: id, webhook_id: webhookId, removed: true },
          `removed webhook ${webhookId} of ${id}`,
        );
      }),
    ['nodereg publisher webhook remove acme 5b0e6c1e-8f3a-4a52-9d1c-2f4b7c9e0a11'],
  );
}
