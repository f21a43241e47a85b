// The RegistryStore contract for `nodereg admin gc`, on every store: versions that have an archive,
// with when their status last changed (kept by the database), and a Deleted version's archive let go
// only while it is still Deleted since before the grace.
import { afterAll, describe, expect, it } from 'vitest';
import type { RegistryStore } from '../../src/server/store/registry-store.js';
import { storeBackends } from './store-backends.js';
import { EMPTY_PENDING_FIELDS } from '../helpers.js';

const backends = storeBackends();

const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

describe.each(backends)('archive gc on $name', (backend) => {
  it('lists archived versions with their status change; drops a Deleted one only past the grace and once', async () => {
    const { store, close } = await backend.open();
    closers.push(close);
    await store.createUser({ id: 'u1', name: 'one' });
    await store.createPublisher('acme', {}, 'u1');
    const versions = [];
    for (const version of ['1.0.0', '1.1.0', '2.0.0']) {
      const published = await store.publish({
        publisherId: 'acme',
        nodeId: 'kept',
        node: {},
        version,
        pending: EMPTY_PENDING_FIELDS,
      });
      if (published.kind !== 'created') throw new Error(published.kind);
      versions.push(published.version);
    }
    const [deleted, live] = versions;
    for (const version of [deleted, live])
      await store.recordArchive(version.id, { sha256: 'ab'.repeat(32), size: 10, status: 'NodeVersionStatusActive' });
    const uploaded = (await store.listArchivedVersions()).find((v) => v.id === deleted.id)!;
    const beforeDelete = new Date().toISOString();
    await store.updateVersion(deleted.id, { status: 'NodeVersionStatusDeleted' });
    const listed = await store.listArchivedVersions();
    expect(listed.map((v) => v.version).sort()).toEqual(['1.0.0', '1.1.0']);
    const changed = listed.find((v) => v.id === deleted.id)!;
    expect(changed).toMatchObject({ publisher_id: 'acme', node_id: 'kept', status: 'NodeVersionStatusDeleted' });
    expect(changed.status_changed_at >= beforeDelete).toBe(true);
    expect(changed.status_changed_at >= uploaded.status_changed_at).toBe(true);
    // a changelog edit is no status change
    await store.updateVersion(deleted.id, { changelog: 'later' });
    expect((await store.listArchivedVersions()).find((v) => v.id === deleted.id)!.status_changed_at).toBe(
      changed.status_changed_at,
    );

    expect(await store.dropDeletedArchive(deleted.id, beforeDelete)).toBe(false);
    expect(await store.dropDeletedArchive(live.id, '9999-01-01T00:00:00.000Z')).toBe(false);
    expect(await store.dropDeletedArchive(deleted.id, '9999-01-01T00:00:00.000Z')).toBe(true);
    expect(await store.dropDeletedArchive(deleted.id, '9999-01-01T00:00:00.000Z')).toBe(false);
    expect(await store.getVersionById(deleted.id)).toMatchObject({
      archive_sha256: null,
      archive_size: null,
      uploaded_at: null,
      status: 'NodeVersionStatusDeleted',
    });
    expect((await store.listArchivedVersions()).map((v) => v.version)).toEqual(['1.1.0']);
  });
});
