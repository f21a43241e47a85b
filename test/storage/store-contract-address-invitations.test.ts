// The RegistryStore contract for invitations by e-mail address, on every store: kept against the
// address in any case, claimed by a user with it once (never to a publisher they belong to), withdrawn.
import { afterAll, describe, expect, it } from 'vitest';
import type { RegistryStore } from '../../src/server/store/registry-store.js';
import { storeBackends } from './store-backends.js';

const backends = storeBackends();

const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

describe.each(backends)('address invitations on $name', (backend) => {
  it('claims the invitations of an address once, in any case, leaving out publishers the user is in', async () => {
    const { store, close } = await backend.open();
    closers.push(close);
    await store.createUser({ id: 'u1', name: 'one' });
    await store.createUser({ id: 'u2', name: 'two', email: 'Two@Example.org' });
    for (const id of ['acme', 'beta', 'gone', 'mine']) await store.createPublisher(id, {}, id === 'mine' ? 'u2' : 'u1');
    await store.inviteAddress({ publisherId: 'acme', email: 'two@example.org', role: 'member', invitedBy: 'u1' });
    await store.inviteAddress({ publisherId: 'acme', email: 'TWO@example.org', role: 'owner', invitedBy: 'u1' });
    await store.inviteAddress({ publisherId: 'beta', email: 'two@example.org', role: 'member', invitedBy: 'u1' });
    await store.inviteAddress({ publisherId: 'gone', email: 'two@example.org', role: 'member', invitedBy: 'u1' });
    await store.inviteAddress({ publisherId: 'mine', email: 'two@example.org', role: 'member', invitedBy: 'u2' });
    await store.inviteAddress({ publisherId: 'acme', email: 'other@example.org', role: 'member', invitedBy: 'u1' });
    expect(await store.removeAddressInvitation('gone', 'Two@example.org')).toBe(true);
    expect(await store.removeAddressInvitation('gone', 'two@example.org')).toBe(false);

    expect(await store.claimAddressInvitations('u2', 'Two@Example.org')).toBe(2);
    const claimed = await store.listInvitations({ userId: 'u2' });
    expect(claimed.map((i) => [i.publisher.id, i.role, i.invited_by?.id]).sort()).toEqual([
      ['acme', 'owner', 'u1'],
      ['beta', 'member', 'u1'],
    ]);
    expect(await store.claimAddressInvitations('u2', 'two@example.org')).toBe(0);
    // u1 owns acme already: nothing to claim there, and the address's invitation is gone all the same
    expect(await store.claimAddressInvitations('u1', 'other@example.org')).toBe(0);
    expect(await store.listInvitations({ userId: 'u1' })).toEqual([]);
    await store.createUser({ id: 'u3', name: 'three' });
    expect(await store.claimAddressInvitations('u3', 'other@example.org')).toBe(0);
  });
});
