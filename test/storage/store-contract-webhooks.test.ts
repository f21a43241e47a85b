// The RegistryStore contract for publishers' webhooks, on every store: kept per publisher, oldest
// first, removed only by their publisher.
import { afterAll, describe, expect, it } from 'vitest';
import type { RegistryStore } from '../../src/server/store/registry-store.js';
import { storeBackends } from './store-backends.js';

const backends = storeBackends();

const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

describe.each(backends)('webhooks on $name', (backend) => {
  it('keeps webhooks per publisher, oldest first, and removes one only through its publisher', async () => {
    const { store, close } = await backend.open();
    closers.push(close);
    await store.createUser({ id: 'u1', name: 'one' });
    await store.createPublisher('acme', {}, 'u1');
    await store.createPublisher('other', {}, 'u1');
    const hook = (id: string, publisher_id: string, created_at: string) => ({
      id,
      publisher_id,
      url: `https://hooks.example/${id}`,
      events: ['version.published'],
      secret: `whsec_${id}`,
      created_by: 'u1',
      created_at,
    });
    await store.addWebhook(hook('b', 'acme', '2026-01-02T00:00:00.000Z'));
    await store.addWebhook(hook('a', 'acme', '2026-01-01T00:00:00.000Z'));
    await store.addWebhook(hook('c', 'other', '2026-01-01T00:00:00.000Z'));
    expect(await store.listWebhooks('acme')).toEqual([
      hook('a', 'acme', '2026-01-01T00:00:00.000Z'),
      hook('b', 'acme', '2026-01-02T00:00:00.000Z'),
    ]);
    expect(await store.removeWebhook('acme', 'c')).toBe(false);
    expect(await store.removeWebhook('acme', 'a')).toBe(true);
    expect((await store.listWebhooks('acme')).map((h) => h.id)).toEqual(['b']);
    expect((await store.listWebhooks('other')).map((h) => h.id)).toEqual(['c']);
  });
});
