// The RegistryStore contract for a user's lifecycle, on every store: the list, disabling (never the
// last enabled admin, also when two admins are disabled at once), and deleting with the memberships
// transferred or removed (never a publisher left without an owner), in one transaction each with
// its audit entry; and the audit log's pages and filters.
import { afterAll, describe, expect, it } from 'vitest';
import type { RegistryStore } from '../../src/server/store/registry-store.js';
import { storeBackends } from './store-backends.js';

const backends = storeBackends();

const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

const token = (name: string) => ({ name, hash: `hash-${name}`, prefix: name });

describe.each(backends)('a user lifecycle on $name', (backend) => {
  /** Admins a1, a2; users u1 (owner of acme, member of both), u2 (owner of both). */
  const fresh = async () => {
    const { store, close } = await backend.open();
    closers.push(close);
    await store.createUser({ id: 'a1', name: 'one', admin: true });
    await store.createUser({ id: 'a2', name: 'two', admin: true });
    await store.createUser({ id: 'u1', name: 'u1', email: 'u1@example.org', token: token('u1') });
    await store.createUser({ id: 'u2', name: 'u2', token: token('u2') });
    await store.createPublisher('acme', {}, 'u1');
    await store.createPublisher('both', {}, 'u2');
    await store.setMember('both', 'u1', 'member');
    return store;
  };

  it('lists the users not deleted, oldest first, a page at a time', async () => {
    const store = await fresh();
    expect((await store.listUsers({ offset: 0, limit: 10 })).rows.map((u) => u.id)).toEqual(['a1', 'a2', 'u1', 'u2']);
    expect(await store.listUsers({ offset: 1, limit: 2 })).toMatchObject({
      total: 4,
      rows: [{ id: 'a2' }, { id: 'u1' }],
    });
    await store.setMember('acme', 'u2', 'owner');
    await store.deleteUser('u1', 'remove', 'a1');
    expect((await store.listUsers({ offset: 0, limit: 10 })).total).toBe(3);
  });

  it('disables and enables, moving the tokens generation each time', async () => {
    const store = await fresh();
    const before = await store.tokenGeneration();
    expect(await store.setUserDisabled('u1', true, 'a1')).toMatchObject({ id: 'u1', disabled_at: expect.any(String) });
    const disabled = await store.tokenGeneration();
    expect(disabled).toBeGreaterThan(before);
    expect((await store.useToken('hash-u1'))?.user.disabled_at).toEqual(expect.any(String));
    expect(await store.setUserDisabled('u1', false, 'a1')).toMatchObject({ disabled_at: null });
    expect(await store.tokenGeneration()).toBeGreaterThan(disabled);
    expect(await store.setUserDisabled('nobody', true, 'a1')).toBe('not-found');
  });

  it('keeps one enabled admin when two admins are disabled at once', async () => {
    const store = await fresh();
    const outcomes = await Promise.all([
      store.setUserDisabled('a1', true, 'a1'),
      store.setUserDisabled('a2', true, 'a1'),
    ]);
    expect(outcomes.filter((o) => o === 'last-admin')).toHaveLength(1);
    expect(await store.deleteUser(outcomes[0] === 'last-admin' ? 'a1' : 'a2', 'remove', 'a1')).toBe('last-admin');
  });

  it('deletes with a transfer: the heir keeps the higher role, tokens are revoked, the name is free to find no one', async () => {
    const store = await fresh();
    await store.createToken({ kind: 'pat', userId: 'u1', publisherId: 'acme', ...token('u1-pat') });
    await store.invite({ publisherId: 'acme', userId: 'u2', role: 'member', invitedBy: 'u1' });
    const outcome = await store.deleteUser('u1', { transferTo: 'u2' }, 'a1');
    expect(outcome).toMatchObject({ kind: 'deleted', user: { id: 'u1', email: null, deleted_at: expect.any(String) } });
    expect(await store.publishersOfUser('u2')).toEqual(
      expect.arrayContaining([
        { id: 'acme', role: 'owner' },
        { id: 'both', role: 'owner' },
      ]),
    );
    expect(await store.listMembers('both')).toHaveLength(1);
    expect(await store.listInvitations({ userId: 'u2' })).toEqual([]);
    expect(await store.useToken('hash-u1')).toBeUndefined();
    expect(await store.useToken('hash-u1-pat')).toBeUndefined();
    expect(await store.listTokens({ madeBy: 'u1' })).toEqual([]);
    expect(await store.findUsers('u1')).toEqual([]);
    expect(await store.findUsers('u1@example.org')).toEqual([]);
    expect(await store.deleteUser('u1', 'remove', 'a1')).toBe('not-found');
  });

  it('refuses to remove the memberships of a sole owner, and changes nothing', async () => {
    const store = await fresh();
    expect(await store.deleteUser('u1', 'remove', 'a1')).toEqual({ kind: 'sole-owner', publishers: ['acme'] });
    expect(await store.publishersOfUser('u1')).toHaveLength(2);
    expect(await store.useToken('hash-u1')).toBeDefined();
    await store.setMember('acme', 'u2', 'owner');
    expect(await store.deleteUser('u1', 'remove', 'a1')).toMatchObject({ kind: 'deleted' });
    expect((await store.listMembers('acme')).map((m) => m.user.id)).toEqual(['u2']);
  });

  it('writes the audit entry of a change in its transaction: a refused change leaves none', async () => {
    const store = await fresh();
    await store.setUserDisabled('u2', true, 'a1');
    await store.setUserDisabled('u2', true, 'a1'); // no change, no entry
    expect(await store.deleteUser('u1', 'remove', 'a2')).toMatchObject({ kind: 'sole-owner' });
    await store.deleteUser('u1', { transferTo: 'u2' }, 'a2');
    const { rows, total } = await store.listAudit({ offset: 0, limit: 10 });
    expect(total).toBe(2);
    expect(rows.map((r) => [r.actor_id, r.action, r.target, r.details])).toEqual([
      ['a2', 'user.delete', 'user:u1', { transfer_to: 'u2' }],
      ['a1', 'user.disable', 'user:u2', {}],
    ]);
  });

  it('lists the audit log newest first, a page at a time, by action and by target', async () => {
    const store = await fresh();
    for (let i = 0; i < 5; i++)
      await store.audit({ actorId: 'a1', action: 'member.add', target: `publisher:p${i % 2}`, details: { i } });
    await store.audit({ actorId: null, action: 'claim.release', target: 'version:n@1.0.0' });
    const all = await store.listAudit({ offset: 0, limit: 3 });
    expect(all.total).toBe(6);
    expect(all.rows.map((r) => r.details.i ?? r.action)).toEqual(['claim.release', 4, 3]);
    expect(all.rows[0]).toMatchObject({ actor_id: null, at: expect.any(String), id: expect.any(String) });
    const byTarget = await store.listAudit({ target: 'publisher:p0', offset: 1, limit: 10 });
    expect(byTarget).toMatchObject({ total: 3, rows: [{ details: { i: 2 } }, { details: { i: 0 } }] });
    expect((await store.listAudit({ action: 'claim.release', offset: 0, limit: 10 })).total).toBe(1);
    expect((await store.listAudit({ action: 'member.add', target: 'publisher:p1', offset: 0, limit: 10 })).total).toBe(
      2,
    );
  });

  it('lists every live token a user made with madeBy, and only their user tokens with userId', async () => {
    const store = await fresh();
    await store.createToken({ kind: 'pat', userId: 'u1', publisherId: 'acme', ...token('p') });
    // (made within one millisecond, the two may come in either order)
    expect((await store.listTokens({ madeBy: 'u1' })).map((t) => t.kind).sort()).toEqual(['pat', 'user']);
    expect((await store.listTokens({ userId: 'u1' })).map((t) => t.kind)).toEqual(['user']);
  });
});
