// PostgreSQL reads a node's versions a page at a time, as SQLite does (src/server/store/version-pages.ts):
// a node that CI publishes to on every commit holds thousands of versions with long changelogs.
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { versionOrder } from '../../src/server/store/version-order.js';
import { VERSIONS_PAGE } from '../../src/server/store/version-pages.js';
import { createPostgresRegistryStore, migratePostgres } from '../../src/server/store/postgres-registry-store.js';
import type { RegistryStore, VersionPendingFields } from '../../src/server/store/registry-store.js';
import { testPostgres } from '../postgres.js';
import { EMPTY_PENDING_FIELDS } from '../helpers.js';

const postgresServer = testPostgres();
const VERSIONS = 2 * VERSIONS_PAGE + 50;
const PENDING: VersionPendingFields = { ...EMPTY_PENDING_FIELDS, changelog: 'c'.repeat(1_000) };

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

/** A store on a fresh database with one node of VERSIONS versions, and the parameters of every query it sent. */
async function storeWithManyVersions() {
  const sent: unknown[][] = [];
  const sql = postgres(await (await postgresServer)!.database(), {
    max: 4,
    onnotice: () => {},
    debug: (_connection, _query, parameters) => sent.push(parameters),
  });
  closers.push(() => sql.end());
  await migratePostgres(sql);
  const store: RegistryStore = createPostgresRegistryStore(sql);
  await store.createUser({ id: 'u1', name: 'one' });
  await store.createPublisher('acme', {}, 'u1');
  await store.publish({ publisherId: 'acme', nodeId: 'many', node: {}, version: '1.0.0', pending: PENDING });
  // the others in one statement, as publish writes them
  const versions = Array.from({ length: VERSIONS - 1 }, (_, i) => `1.0.${i + 1}`);
  await sql`INSERT INTO versions (id, node_id, version, version_order, changelog, created_at)
    SELECT gen_random_uuid()::text, 'many', v.version, v.version_order, ${PENDING.changelog}, now()::text
    FROM unnest(${sql.array(versions)}::text[], ${sql.array(versions.map(versionOrder))}::text[]) AS v(version, version_order)`;
  return { store, sent };
}

describe.runIf(postgresServer)('the versions of a node on PostgreSQL', () => {
  it(`are read in pages of at most ${VERSIONS_PAGE} rows, highest first`, async () => {
    const { store, sent } = await storeWithManyVersions();
    sent.length = 0;
    const listed = await store.listVersions('many');
    expect(listed.map((version) => version.version)).toEqual(
      Array.from({ length: VERSIONS }, (_, i) => `1.0.${VERSIONS - 1 - i}`),
    );
    // a page names its rows by id: one array of ids (sent as a text[] literal) per query
    const pages = sent.flatMap((parameters) =>
      parameters.filter((parameter) => typeof parameter === 'string' && parameter.startsWith('{"')),
    );
    expect(pages.map((ids) => String(ids).split('","').length)).toEqual([
      VERSIONS_PAGE,
      VERSIONS_PAGE,
      VERSIONS - 2 * VERSIONS_PAGE,
    ]);
  }, 60_000);

  it('are those of one moment, also when writes land between two pages of the read', async () => {
    const { store } = await storeWithManyVersions();
    const before = await store.listVersions('many');
    const [highest, lowest] = [before[0], before.at(-1)!];
    const listing = store.listVersions('many');
    await store.updateVersion(lowest.id, { deprecated: true });
    await store.updateVersion(highest.id, { deprecated: true });
    const listed = await listing;
    // both written or neither: never the highest as it was with the lowest as it is
    expect(listed[0].deprecated).toBe(listed.at(-1)!.deprecated);
    expect(await store.listVersions('many')).toEqual(
      before.map((version) => (version === highest || version === lowest ? { ...version, deprecated: true } : version)),
    );
  }, 60_000);
});
