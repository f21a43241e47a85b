// A token's last_used_at is kept to the minute (docs/decisions.md): using it again within a minute
// writes nothing, so authenticated requests cost no write transaction each.
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/server/store/db.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { tempDir } from '../helpers.js';

afterEach(() => vi.useRealTimers());

describe('useToken', () => {
  it('records the first use, not a use within the minute after, then the next use after that', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T10:00:00.000Z'));
    const db = openDatabase(join(tempDir(), 'registry.db'));
    const store = createSqliteRegistryStore(db);
    await store.createUser({ id: 'u', name: 'u', token: { name: 't', hash: 'h'.repeat(64), prefix: 'nrg_u_x' } });
    const stored = () => db.prepare('SELECT last_used_at FROM tokens').pluck().get();
    expect(stored()).toBeNull();

    const first = await store.useToken('h'.repeat(64));
    expect(first?.user.id).toBe('u');
    expect(first?.token.last_used_at).toBe('2026-01-01T10:00:00.000Z');
    expect(stored()).toBe('2026-01-01T10:00:00.000Z');

    vi.setSystemTime(new Date('2026-01-01T10:00:59.000Z'));
    expect((await store.useToken('h'.repeat(64)))?.token.last_used_at).toBe('2026-01-01T10:00:00.000Z');
    expect(stored()).toBe('2026-01-01T10:00:00.000Z');

    vi.setSystemTime(new Date('2026-01-01T10:01:00.000Z'));
    expect((await store.useToken('h'.repeat(64)))?.token.last_used_at).toBe('2026-01-01T10:01:00.000Z');
    expect(stored()).toBe('2026-01-01T10:01:00.000Z');
    expect(await store.useToken('x'.repeat(64))).toBeUndefined();
    db.close();
  });
});
