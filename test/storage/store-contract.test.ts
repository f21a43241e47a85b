// The RegistryStore contract: the same tests for every store. Each invariant that must hold across
// server instances (one winner among racing publishers, one archive per version, exact review
// means, revocation at once) is decided by the store, so it is tested here, on the store itself.
import fc from 'fast-check';
import semver from 'semver';
import { afterEach, describe, expect, it } from 'vitest';
import { NODE_STATUS, PUBLISHER_STATUS } from '../../src/contract/limits.js';
import type { RegistryStore, VersionStatus } from '../../src/server/store/registry-store.js';
import type { VersionRow } from '../../src/server/store/registry-store.js';
import { storeBackends } from './store-backends.js';
import { EMPTY_PENDING_FIELDS } from '../helpers.js';

const backends = storeBackends();

const ACTIVE = 'NodeVersionStatusActive' as const;

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe.each(backends)('RegistryStore on $name', (backend) => {
  /** A store with users u1, u2 and publishers acme (owner u1) and other (owner u2). */
  let ageClaims: () => Promise<unknown>;
  const fresh = async () => {
    const { store, close, execute } = await backend.open();
    ageClaims = () => execute("UPDATE archive_claims SET created_at = '2000-01-01T00:00:00.000Z'");
    closers.push(close);
    await store.createUser({ id: 'u1', name: 'one' });
    await store.createUser({ id: 'u2', name: 'two' });
    expect(await store.createPublisher('acme', { name: 'Acme' }, 'u1')).toMatchObject({ id: 'acme', name: 'Acme' });
    await store.createPublisher('other', {}, 'u2');
    return store;
  };
  const publish = (store: RegistryStore, nodeId: string, version = '1.0.0', publisherId = 'acme', node = {}) =>
    store.publish({ publisherId, nodeId, node, version, pending: EMPTY_PENDING_FIELDS });
  /** A node of publisher makers (owner maker), which u1 and u2 may review. */
  const publishToReview = async (store: RegistryStore, nodeId: string) => {
    if (!(await store.getPublisher('makers'))) {
      await store.createUser({ id: 'maker', name: 'maker' });
      await store.createPublisher('makers', {}, 'maker');
    }
    return publish(store, nodeId, '1.0.0', 'makers');
  };

  it('of racing publishers of one node by two publishers, one owns it; the others are told whose it is', async () => {
    const store = await fresh();
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => publish(store, 'raced', '1.0.0', i % 2 ? 'other' : 'acme')),
    );
    const owners = new Set(
      outcomes
        .filter((o) => o.kind === 'created' || o.kind === 'retried')
        .map((o) => ('node' in o ? o.node.publisher_id : '')),
    );
    expect(owners.size).toBe(1);
    expect(outcomes.filter((o) => o.kind === 'created')).toHaveLength(1);
    const [owner] = owners;
    for (const outcome of outcomes.filter((o) => o.kind === 'other-publisher'))
      expect(outcome).toEqual({ kind: 'other-publisher', publisherId: owner });
    expect((await store.listVersions('raced')).map((v) => v.version)).toEqual(['1.0.0']);
  });

  it("refuses a new node whose id reads as another publisher's node's, and lets its own publisher take one", async () => {
    const store = await fresh();
    const long = `lo${'-'.repeat(90)}ng`;
    expect(await publish(store, 'image-tools')).toMatchObject({ kind: 'created' });
    expect(await publish(store, long)).toMatchObject({ kind: 'created' });
    for (const lookalike of ['image_tools', 'image.tools', 'image--tools', 'Image_Tools', 'IMAGE-._-TOOLS'])
      expect(await publish(store, lookalike, '1.0.0', 'other'), lookalike).toEqual({
        kind: 'look-alike',
        nodeId: 'image-tools',
        publisherId: 'acme',
      });
    expect(await publish(store, 'lo_ng', '1.0.0', 'other')).toMatchObject({ kind: 'look-alike', nodeId: long });
    expect(await publish(store, 'image-tool', '1.0.0', 'other')).toMatchObject({ kind: 'created' });
    expect(await publish(store, 'image_tools', '1.0.0', 'acme')).toMatchObject({ kind: 'created' });
  });

  it('says which of many node and publisher names it holds, each as given, in one call', async () => {
    const store = await fresh();
    await publish(store, 'Held-Node');
    const many = Array.from({ length: 2_000 }, (_, i) => `absent-${i}`);
    const held = await store.heldNames({
      nodeIds: ['held-node', 'HELD-NODE', 'held_node', ...many, "it's"],
      publisherIds: ['acme', 'other', 'nobody', ...many],
    });
    // Found as getNode finds a node (any case; a look-alike is another id) and getPublisher a publisher.
    expect(held.nodeIds.sort()).toEqual(['HELD-NODE', 'held-node']);
    for (const id of held.nodeIds) expect(await store.getNode(id)).toBeDefined();
    expect(held.publisherIds.sort()).toEqual(['acme', 'other']);
    expect(await store.heldNames({ nodeIds: [], publisherIds: [] })).toEqual({ nodeIds: [], publisherIds: [] });
  });

  it('gives the archive of a version to exactly one of racing claims, and to none once recorded', async () => {
    const store = await fresh();
    const outcome = await publish(store, 'claimed');
    if (outcome.kind !== 'created') throw new Error(outcome.kind);
    const claims = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.claimArchive(outcome.version.id, `key-${i}`)),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.listArchiveClaims()).toEqual([
      { version_id: outcome.version.id, key: `key-${claims.indexOf(true)}`, created_at: expect.any(String) },
    ]);
    await store.releaseArchive(outcome.version.id);
    expect(await store.claimArchive(outcome.version.id, 'again')).toBe(true);
    const recorded = await store.recordArchive(outcome.version.id, {
      sha256: 'ab'.repeat(32),
      size: 10,
      status: 'NodeVersionStatusActive',
    });
    expect(recorded).toMatchObject({
      archive_sha256: 'ab'.repeat(32),
      archive_size: 10,
      status: 'NodeVersionStatusActive',
    });
    expect(await store.listArchiveClaims()).toEqual([]);
    expect(await store.claimArchive(outcome.version.id, 'late')).toBe(false);
    expect(await publish(store, 'claimed')).toMatchObject({ kind: 'archive-exists' });
  });

  it('keeps the node classes a version defines, found by name among Active versions, newest first', async () => {
    const store = await fresh();
    const definition = (name: string) => ({
      name,
      displayName: `${name} shown`,
      category: 'c',
      description: '',
      function: 'run',
      returnTypes: ['IMAGE'],
      returnNames: [],
      outputIsList: [],
      outputNode: false,
      deprecated: false,
      experimental: false,
      inputs: { required: { image: 'IMAGE' }, optional: {} },
    });
    const record = async (
      nodeId: string,
      names: string[],
      status: VersionRow['status'] = 'NodeVersionStatusActive',
    ) => {
      const outcome = await publish(store, nodeId);
      if (outcome.kind !== 'created') throw new Error(outcome.kind);
      const classes = { status: 'success' as const, reason: '', classes: names.map(definition) };
      return store.recordArchive(outcome.version.id, { sha256: 'ab'.repeat(32), size: 1, status, classes });
    };
    const older = await record('first', ['Blur', 'Invert']);
    expect(older).toMatchObject({ app_node_extract_status: 'success', app_node_extract_reason: null });
    await new Promise((resolve) => setTimeout(resolve, 5)); // created_at apart
    const newer = await record('second', ['Invert']);
    await record('held', ['Invert'], 'NodeVersionStatusFlagged');
    expect((await store.listNodeClasses(older.id)).map((row) => row.definition)).toEqual([
      definition('Blur'),
      definition('Invert'),
    ]);
    expect((await store.classDefiners('Invert', 10)).map((row) => row.version_id)).toEqual([newer.id, older.id]);
    expect(await store.classDefiners('Nowhere', 10)).toEqual([]);
    const page = await store.listActiveClasses({ offset: 1, limit: 1 });
    expect({ total: page.total, names: page.rows.map((row) => row.definition.name) }).toEqual({
      total: 3,
      names: ['Invert'],
    });
    const failed = await (async () => {
      const outcome = await publish(store, 'broken');
      if (outcome.kind !== 'created') throw new Error(outcome.kind);
      return store.recordArchive(outcome.version.id, {
        sha256: 'ab'.repeat(32),
        size: 1,
        status: 'NodeVersionStatusActive',
        classes: { status: 'failed', reason: 'why', classes: [] },
      });
    })();
    expect(failed).toMatchObject({ app_node_extract_status: 'failed', app_node_extract_reason: 'why' });
  });

  it('never revives a Banned, Flagged or Deleted version: no claim, no reset by a publish, a status set meanwhile stays', async () => {
    const store = await fresh();
    for (const status of ['NodeVersionStatusBanned', 'NodeVersionStatusFlagged', 'NodeVersionStatusDeleted'] as const) {
      const outcome = await publish(store, `held-${status}`);
      if (outcome.kind !== 'created') throw new Error(outcome.kind);
      await store.updateVersion(outcome.version.id, { status });
      expect(await store.claimArchive(outcome.version.id, 'k')).toBe(false);
      expect(await publish(store, `held-${status}`)).toMatchObject({ kind: 'status-locked', version: { status } });
      expect((await store.getVersionById(outcome.version.id))!.status).toBe(status);
    }
    // banned between the claim and the record: the archive is recorded, the ban stays
    const outcome = await publish(store, 'raced-ban');
    if (outcome.kind !== 'created') throw new Error(outcome.kind);
    expect(await store.claimArchive(outcome.version.id, 'k')).toBe(true);
    await store.updateVersion(outcome.version.id, { status: 'NodeVersionStatusBanned' });
    const recorded = await store.recordArchive(outcome.version.id, {
      sha256: 'cd'.repeat(32),
      size: 5,
      status: 'NodeVersionStatusActive',
    });
    expect(recorded.status).toBe('NodeVersionStatusBanned');
  });

  /** Publishes `version` of `nodeId` and records its archive with `status` (without one when pending). */
  const published = async (
    store: RegistryStore,
    nodeId: string,
    version: string,
    status: VersionStatus,
    deprecated = false,
  ) => {
    const outcome = await publish(store, nodeId, version);
    if (outcome.kind !== 'created') throw new Error(outcome.kind);
    if (status !== 'NodeVersionStatusPending') {
      await store.claimArchive(outcome.version.id, `k-${nodeId}-${version}`);
      await store.recordArchive(outcome.version.id, { sha256: 'ab'.repeat(32), size: 1, status });
    }
    if (deprecated) await store.updateVersion(outcome.version.id, { deprecated });
  };

  it('lists every version of a node, the highest semver first; latest_version is chosen from the Active ones', async () => {
    const store = await fresh();
    const statuses = {
      '1.0.0': 'NodeVersionStatusActive',
      '1.10.0': 'NodeVersionStatusFlagged',
      '1.2.0': 'NodeVersionStatusBanned',
      '2.0.0': 'NodeVersionStatusActive',
    } as const;
    for (const [version, status] of Object.entries(statuses)) await published(store, 'listed', version, status);
    await published(store, 'listed', '3.0.0', 'NodeVersionStatusPending'); // its archive never came
    await published(store, 'other', '9.0.0', 'NodeVersionStatusActive');
    const listed = await store.listVersions('listed');
    expect(listed.map((v) => v.version)).toEqual(['3.0.0', '2.0.0', '1.10.0', '1.2.0', '1.0.0']);
    // the store's sort key stays the store's
    expect(Object.keys(listed[0]).sort()).toEqual(Object.keys((await store.getVersion('listed', '3.0.0'))!).sort());
    expect(Object.keys(listed[0])).not.toContain('version_order');
    const latest = await store.latestVersions(['listed', 'other', 'none']);
    expect(latest.map((v) => [v.node_id, v.version]).sort()).toEqual([
      ['listed', '2.0.0'],
      ['other', '9.0.0'],
    ]);
    expect(latest.find((v) => v.node_id === 'listed')).toEqual(await store.getVersion('listed', '2.0.0'));
  });

  it('chooses latest_version as DESIGN.md §3 says: releases, then pre-releases, then deprecated ones, by semver', async () => {
    const store = await fresh();
    const cases: [string, [string, VersionStatus, boolean?][], string | undefined][] = [
      [
        'semver',
        [
          ['1.2.0', ACTIVE],
          ['1.10.0', ACTIVE],
          ['1.9.9', ACTIVE],
        ],
        '1.10.0',
      ],
      [
        'release',
        [
          ['2.0.0-rc.1', ACTIVE],
          ['1.10.0', ACTIVE],
        ],
        '1.10.0',
      ],
      [
        'active',
        [
          ['3.0.0', 'NodeVersionStatusPending'],
          ['2.0.0', 'NodeVersionStatusBanned'],
          ['1.0.0', ACTIVE],
        ],
        '1.0.0',
      ],
      [
        'current',
        [
          ['2.0.0', ACTIVE, true],
          ['1.0.0', ACTIVE],
        ],
        '1.0.0',
      ],
      [
        'pre',
        [
          ['2.0.0-beta.2', ACTIVE],
          ['2.0.0-beta.10', ACTIVE],
          ['1.0.0', ACTIVE, true],
        ],
        '2.0.0-beta.10',
      ],
      [
        'deprecated',
        [
          ['1.0.0', ACTIVE, true],
          ['1.1.0-rc.1', ACTIVE, true],
        ],
        '1.1.0-rc.1',
      ],
      [
        'none',
        [
          ['1.0.0', 'NodeVersionStatusPending'],
          ['1.0.1', 'NodeVersionStatusFlagged'],
          ['1.0.2', 'NodeVersionStatusDeleted'],
        ],
        undefined,
      ],
    ];
    for (const [node, versions] of cases)
      for (const [version, status, deprecated] of versions) await published(store, node, version, status, deprecated);
    const latest = new Map(
      (await store.latestVersions(cases.map(([node]) => node))).map((v) => [v.node_id, v.version]),
    );
    expect(Object.fromEntries(cases.map(([node]) => [node, latest.get(node)]))).toEqual(
      Object.fromEntries(cases.map(([node, , want]) => [node, want])),
    );
  });

  it('orders random versions as semver does, and picks the latest the way the rule reads (property, fixed seed)', async () => {
    const store = await fresh();
    const id = fc.oneof(
      fc.nat({ max: 12 }).map(String),
      fc.constantFrom('alpha', 'beta', 'rc', 'a', 'b-1', 'Z', 'alpha1', '0a'),
    );
    const version = fc
      .tuple(
        fc.nat({ max: 3 }),
        fc.constantFrom(0, 1, 10, 2),
        fc.constantFrom(0, 9, 10),
        fc.option(fc.array(id, { minLength: 1, maxLength: 3 }), { nil: undefined }),
      )
      .map(([a, b, c, pre]) => `${a}.${b}.${c}${pre ? `-${pre.join('.')}` : ''}`);
    const status = fc.constantFrom<VersionStatus>(
      ACTIVE,
      ACTIVE,
      'NodeVersionStatusPending',
      'NodeVersionStatusFlagged',
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(version, status, fc.boolean()), { minLength: 1, maxLength: 8, selector: ([v]) => v }),
        async (rows) => {
          const node = `prop-${run++}`;
          for (const [v, s, deprecated] of rows) await published(store, node, v, s, deprecated);
          const bySemver = rows.map(([v]) => v).sort(semver.rcompare);
          expect((await store.listVersions(node)).map((v) => v.version)).toEqual(bySemver);
          // the rule as DESIGN.md §3 words it, over semver
          const active = rows.filter(([, s]) => s === ACTIVE).sort(([a], [b]) => semver.rcompare(a, b));
          const current = active.filter(([, , deprecated]) => !deprecated);
          const want = (current.find(([v]) => semver.prerelease(v) === null) ?? current[0] ?? active[0])?.[0];
          expect((await store.latestVersions([node]))[0]?.version).toBe(want);
        },
      ),
      { numRuns: 25, seed: 20261126 },
    );
  });

  it("keeps a scan's findings with the version, and its Flagged status and reason only while it was Pending", async () => {
    const store = await fresh();
    const finding = {
      rule: 'runtime-install' as const,
      severity: 'high' as const,
      file: 'nodes/run.py',
      line: 4,
      column: 5,
      message: 'subprocess.run() runs a package install',
      hint: 'declare it',
      reason: 'ours',
    };
    const outcome = await publish(store, 'scanned');
    if (outcome.kind !== 'created') throw new Error(outcome.kind);
    expect(outcome.version.findings).toBeNull();
    await store.claimArchive(outcome.version.id, 'k');
    const recorded = await store.recordArchive(outcome.version.id, {
      sha256: 'ef'.repeat(32),
      size: 7,
      status: 'NodeVersionStatusFlagged',
      statusReason: 'scan: runtime-install at nodes/run.py:4',
      findings: [finding],
    });
    expect(recorded).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: 'scan: runtime-install at nodes/run.py:4',
      findings: [finding],
    });
    expect((await store.getVersion('scanned', '1.0.0'))!.findings).toEqual([finding]);
    expect((await store.listVersions('scanned'))[0].findings).toEqual([finding]);
    // an admin's status and reason set meanwhile stay; the findings are recorded all the same
    const held = await publish(store, 'scanned', '1.1.0');
    if (held.kind !== 'created') throw new Error(held.kind);
    await store.claimArchive(held.version.id, 'k2');
    await store.updateVersion(held.version.id, { status: 'NodeVersionStatusBanned', status_reason: 'by hand' });
    const kept = await store.recordArchive(held.version.id, {
      sha256: '01'.repeat(32),
      size: 7,
      status: 'NodeVersionStatusFlagged',
      statusReason: 'scan: x',
      findings: [],
    });
    expect(kept).toMatchObject({ status: 'NodeVersionStatusBanned', status_reason: 'by hand', findings: [] });
  });

  it('keeps the findings an admin approved for a node: the first approval of a fingerprint stays, other nodes see none', async () => {
    const store = await fresh();
    const first = await publish(store, 'approved');
    const second = await publish(store, 'approved', '2.0.0');
    if (first.kind !== 'created' || second.kind !== 'created') throw new Error('not created');
    expect(await store.approvedFindings('approved')).toEqual([]);
    await store.approveFindings('approved', first.version.id, [
      { fingerprint: 'aa', rule: 'runtime-install' },
      { fingerprint: 'bb', rule: 'dynamic-execution' },
    ]);
    await store.approveFindings('approved', second.version.id, [
      { fingerprint: 'bb', rule: 'dynamic-execution' },
      { fingerprint: 'cc', rule: 'obfuscation' },
    ]);
    const listed = await store.approvedFindings('approved');
    expect(listed.map(({ fingerprint, rule, version }) => [fingerprint, rule, version])).toEqual([
      ['aa', 'runtime-install', '1.0.0'],
      ['bb', 'dynamic-execution', '1.0.0'],
      ['cc', 'obfuscation', '2.0.0'],
    ]);
    expect(Number.isNaN(Date.parse(listed[0].approved_at))).toBe(false);
    expect(await store.approvedFindings('other-node')).toEqual([]);
  });

  it('lets a claim left long ago (its instance died before recording) be taken over, once', async () => {
    const store = await fresh();
    const outcome = await publish(store, 'abandoned');
    if (outcome.kind !== 'created') throw new Error(outcome.kind);
    expect(await store.claimArchive(outcome.version.id, 'dead')).toBe(true);
    expect(await store.claimArchive(outcome.version.id, 'early')).toBe(false);
    await ageClaims();
    const takers = await Promise.all([1, 2, 3].map((i) => store.claimArchive(outcome.version.id, `taker-${i}`)));
    expect(takers.filter(Boolean)).toHaveLength(1);
    expect((await store.listArchiveClaims()).map((claim) => claim.key)).toEqual([`taker-${takers.indexOf(true) + 1}`]);
  });

  it('gives a node its defaults only when the publish creates it; later publishes change only what they set', async () => {
    const store = await fresh();
    const created = await store.publish({
      publisherId: 'acme',
      nodeId: 'named',
      node: { icon: 'https://i' },
      nodeDefaults: { name: 'named' },
      version: '1.0.0',
      pending: EMPTY_PENDING_FIELDS,
    });
    expect(created).toMatchObject({ kind: 'created', node: { name: 'named', icon: 'https://i' } });
    await store.updateNode('named', { name: 'Chosen Name' });
    const later = await store.publish({
      publisherId: 'acme',
      nodeId: 'named',
      node: {},
      nodeDefaults: { name: 'named' },
      version: '1.0.1',
      pending: EMPTY_PENDING_FIELDS,
    });
    expect(later).toMatchObject({ kind: 'created', node: { name: 'Chosen Name', icon: 'https://i' } });
    const explicit = await store.publish({
      publisherId: 'acme',
      nodeId: 'given',
      node: { name: 'Given' },
      nodeDefaults: { name: 'given' },
      version: '1.0.0',
      pending: EMPTY_PENDING_FIELDS,
    });
    expect(explicit).toMatchObject({ node: { name: 'Given' } });
  });

  it("keeps the rating the exact mean of each user's last review", async () => {
    const store = await fresh();
    await publishToReview(store, 'rated');
    await Promise.all([store.review('rated', 'u1', 5), store.review('rated', 'u2', 2)]);
    expect((await store.review('rated', 'u1', 4)).node?.rating).toBe(3);
    expect((await store.getNode('rated'))!.rating).toBe(3);
  });

  it('keeps the rating exact with 50 users reviewing at once, again and again', async () => {
    const store = await fresh();
    await publishToReview(store, 'crowd');
    const users = Array.from({ length: 50 }, (_, i) => `r${i}`);
    for (const id of users) await store.createUser({ id, name: id });
    const last = new Map<string, number>();
    for (let round = 0; round < 4; round++) {
      // stars that differ per user and per round (the last round's mean is 2.98)
      await Promise.all(
        users.map((id, i) => (last.set(id, (i % 3) + (round % 2) + 1), store.review('crowd', id, last.get(id)!))),
      );
    }
    const mean = [...last.values()].reduce((a, b) => a + b, 0) / last.size;
    expect(mean).not.toBe(Math.round(mean));
    expect((await store.getNode('crowd'))!.rating).toBeCloseTo(mean, 12);
  });

  it('of reviews sent together, one that fails (an unknown user) fails alone; the others are kept', async () => {
    const store = await fresh();
    await publishToReview(store, 'mixed');
    const outcomes = await Promise.allSettled([
      store.review('mixed', 'u1', 5),
      store.review('mixed', 'nobody', 1),
      store.review('mixed', 'u2', 2),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await store.getNode('mixed'))!.rating).toBe(3.5);
    expect((await store.review('mixed', 'u1', 4)).node?.rating).toBe(3);
  });

  it("returns the node's state after a review, its rating moved and its generation not", async () => {
    const store = await fresh();
    await publishToReview(store, 'told');
    const node = async () => (await store.getNode('told'))!;
    const { generation, created_at } = await node();
    const first = await store.review('told', 'u1', 4);
    expect(first).toMatchObject({
      node: { id: 'told', publisher_id: 'makers', status: 'NodeStatusActive', created_at, generation, rating: 4 },
    });
    expect((await store.review('told', 'u2', 1)).node).toMatchObject({ generation, rating: 2.5 });
    expect((await store.review('told', 'u2', 1)).node).toMatchObject({ generation, rating: 2.5 });
    expect(await store.getNodeState('told')).toEqual({ ...first.node, rating: 2.5 });
    expect((await node()).generation).toBe(generation);
  });

  it("refuses a review by a member of the node's publisher, and writes nothing", async () => {
    const store = await fresh();
    await publish(store, 'own');
    await store.review('own', 'u2', 2);
    expect(await store.review('own', 'u1', 5)).toEqual({ refused: 'member' });
    expect((await store.getNode('own'))!.rating).toBe(2);
  });

  it("moves a node's generation on every write that changes its answer, and only then", async () => {
    const store = await fresh();
    await publish(store, 'gen');
    const generation = async () => (await store.getNode('gen'))!.generation;
    let last = await generation();
    const moved = async (what: string) => {
      const now = await generation();
      expect(now, what).toBeGreaterThan(last);
      last = now;
    };
    await store.updateNode('gen', { description: 'new words' });
    await moved('node update');
    const version = (await store.getVersion('gen', '1.0.0'))!;
    await store.updateVersion(version.id, { changelog: 'fixes' });
    await moved('version update');
    await publish(store, 'gen', '1.1.0');
    await moved('new version');
    await store.recordArchive(version.id, { sha256: 'a'.repeat(64), size: 10, status: 'NodeVersionStatusActive' });
    await moved('archive recorded');
    await store.updatePublisher('acme', { description: 'we make nodes' });
    await moved('publisher update');
    await store.countDownload('gen', { day: '2026-12-07', key: 'k1' });
    await moved('download');
    // a review moves the rating alone, which the node's state carries (migration 'rating-apart-from-generation')
    await store.review('gen', 'u2', 4);
    await store.review('gen', 'u2', 2);
    await store.review('gen', 'u2', 2);
    await store.getNode('gen');
    await store.listVersions('gen');
    await store.latestVersions(['gen']);
    expect(await generation(), 'reviews, and reads').toBe(last);
  });

  it("moves the tokens generation when a token is revoked or a user's admin flag changes", async () => {
    const store = await fresh();
    const first = await store.tokenGeneration();
    const token = await store.createToken({
      kind: 'user',
      userId: 'u1',
      name: 't',
      hash: 'g'.repeat(64),
      prefix: 'nrg_u_x',
    });
    await store.useToken('g'.repeat(64));
    expect(await store.tokenGeneration()).toBe(first);
    await store.revokeToken(token.id);
    const revoked = await store.tokenGeneration();
    expect(revoked).toBeGreaterThan(first);
    await store.ensureBootstrapAdmin('u2', 'b'.repeat(64), 'nrg_u_b');
    expect(await store.tokenGeneration()).toBeGreaterThan(revoked);
  });

  it('refuses a revoked token at once', async () => {
    const store = await fresh();
    const token = await store.createToken({
      kind: 'user',
      userId: 'u1',
      name: 't',
      hash: 'h'.repeat(64),
      prefix: 'nrg_u_x',
    });
    expect((await store.useToken('h'.repeat(64)))?.user.id).toBe('u1');
    await store.revokeToken(token.id);
    expect(await store.useToken('h'.repeat(64))).toBeUndefined();
    expect(await store.listTokens({ userId: 'u1' })).toEqual([]);
  });

  it('updates only the node fields given: null clears, the document holds only what the contract allows', async () => {
    const store = await fresh();
    await publish(store, 'meta', '1.0.0', 'acme', { name: 'Meta', icon: 'https://i', tags: ['a'] });
    const updated = await store.updateNode('meta', { icon: null, license: 'MIT', tags: ['b', 'c'], search_ranking: 4 });
    expect(updated).toMatchObject({
      name: 'Meta',
      icon: null,
      license: 'MIT',
      tags: ['b', 'c'],
      search_ranking: 4,
      status: 'NodeStatusActive',
    });
    await expect(store.updateNode('meta', { license: ['not', 'text'] as unknown as string })).rejects.toThrow();
    expect((await store.getNode('META'))!.license).toBe('MIT'); // found by any case
  });

  it('lists and searches Active nodes of publishers that are not banned', async () => {
    const store = await fresh();
    await publish(store, 'upscaler', '1.0.0', 'acme', { description: 'makes pictures larger' });
    await publish(store, 'gone', '1.0.0', 'acme', { description: 'larger pictures' });
    await store.updateNode('gone', { status: 'NodeStatusDeleted' });
    await publish(store, 'hidden', '1.0.0', 'other', { description: 'larger pictures' });
    await store.updatePublisher('other', { status: 'PublisherStatusBanned' });
    const listed = await store.listNodes({ sort: 'created_at', offset: 0, limit: 10 });
    expect(listed).toMatchObject({ total: 1, rows: [{ id: 'upscaler' }] });
    const found = await store.searchNodes({ terms: ['larg', 'pict'], offset: 0, limit: 10 });
    expect(found.rows.map((node) => node.id)).toEqual(['upscaler']);
    await store.updatePublisher('other', { status: 'PublisherStatusActive' });
    expect((await store.searchNodes({ terms: ['larger'], offset: 0, limit: 10 })).total).toBe(2);
  });

  it("pages a publisher's nodes by id, only those of the statuses asked for", async () => {
    const store = await fresh();
    for (const id of ['b-node', 'a-node', 'd-node', 'c-node']) await publish(store, id);
    await store.updateNode('c-node', { status: 'NodeStatusDeleted' });
    const ids = async (statuses: readonly (typeof NODE_STATUS)[number][], offset: number, limit: number) =>
      (await store.listPublisherNodes('acme', { statuses, offset, limit })).map((node) => node.id);
    expect(await ids(['NodeStatusActive'], 0, 10)).toEqual(['a-node', 'b-node', 'd-node']);
    expect(await ids(NODE_STATUS, 1, 2)).toEqual(['b-node', 'c-node']);
    expect(await ids(NODE_STATUS, 4, 2)).toEqual([]);
  });

  it('finds the words of joined and CamelCase ids and names, following renames, the exact id first', async () => {
    const store = await fresh();
    const ids = async (q: string) =>
      (await store.searchNodes({ terms: q.match(/[\p{L}\p{N}]+/gu)!, offset: 0, limit: 10 })).rows.map(
        (node) => node.id,
      );
    // Kosinkadink/ComfyUI-VideoHelperSuite and ssitu/ComfyUI_UltimateSDUpscale, as their pyproject.toml names them
    await publish(store, 'comfyui-videohelpersuite', '1.0.0', 'acme', {
      name: 'ComfyUI-VideoHelperSuite',
      description: 'Nodes related to video workflows',
    });
    await publish(store, 'comfyui_ultimatesdupscale', '1.0.0', 'acme', { name: 'ComfyUI_UltimateSDUpscale' });
    await publish(store, 'ComfyUI-SDXL2Image', '1.0.0', 'acme', {});
    await publish(store, 'upscale-helper', '1.0.0', 'acme', { description: 'helps to upscale' });
    await publish(store, 'sd-upscale', '1.0.0', 'acme', {});
    expect(await ids('video helper suite')).toEqual(['comfyui-videohelpersuite']);
    expect(await ids('ultimate sd upscale')).toEqual(['comfyui_ultimatesdupscale']);
    expect(await ids('SDUpscale')).toEqual(['comfyui_ultimatesdupscale']);
    expect(await ids('sdxl 2 image')).toEqual(['ComfyUI-SDXL2Image']);
    expect(await ids('comfyui ultimatesdupscale')).toEqual(['comfyui_ultimatesdupscale']);
    expect((await ids('upscale helper'))[0]).toBe('upscale-helper');
    expect(await ids('sd upscale')).toEqual(['sd-upscale', 'comfyui_ultimatesdupscale']); // the exact id first
    expect((await ids('helper')).sort()).toEqual(['comfyui-videohelpersuite', 'upscale-helper']);
    // a rename changes the words
    await store.updateNode('COMFYUI_ULTIMATESDUPSCALE', { name: 'Tiled Upscaler' });
    expect(await ids('SDUpscale')).toEqual([]);
    expect(await ids('ultimate')).toEqual(['comfyui_ultimatesdupscale']); // its id still holds the joined word
    expect(await ids('tiled')).toEqual(['comfyui_ultimatesdupscale']);
    // nothing of the words shows in the node
    expect(Object.keys((await store.getNode('comfyui-videohelpersuite'))!)).not.toContain('words');
  });

  it('finds nodes about user interfaces by `ui`, not every node named after ComfyUI', async () => {
    const store = await fresh();
    const ids = async (q: string) =>
      (await store.searchNodes({ terms: [q], offset: 0, limit: 10 })).rows.map((node) => node.id).sort();
    // the host's name, however it is written, is one word: ComfyUI, comfyUI, ComfyUi, and inside a token (ComfyUIManager)
    await publish(store, 'comfyui-videohelpersuite', '1.0.0', 'acme', { name: 'ComfyUI-VideoHelperSuite' });
    await publish(store, 'comfyui-impact-pack', '1.0.0', 'acme', { name: 'comfyUI Impact Pack' });
    await publish(store, 'ComfyUiManagerTools', '1.0.0', 'acme', {});
    await publish(store, 'comfyui-custom-ui', '1.0.0', 'acme', { name: 'Custom UI' });
    await publish(store, 'comfyui-nodeui', '1.0.0', 'acme', { name: 'ComfyUI-NodeUI' });
    await publish(store, 'prompt-panel', '1.0.0', 'acme', { description: 'a UI panel for prompts' });
    expect(await ids('ui')).toEqual(['comfyui-custom-ui', 'comfyui-nodeui', 'prompt-panel']);
    expect(await ids('manager')).toEqual(['ComfyUiManagerTools']);
    expect(await ids('helper')).toEqual(['comfyui-videohelpersuite']);
    expect((await ids('comfyui')).length).toBe(5);
  });

  it('counts a download once per day and key: again the same day is not counted, another key or the next day is', async () => {
    const store = await fresh();
    await publish(store, 'counted', '1.0.0');
    const downloads = async () => (await store.getNode('counted'))!.downloads;
    expect(await store.countDownload('counted', { day: '2026-12-07', key: 'a' })).toBe(true);
    for (let i = 0; i < 5; i++)
      expect(await store.countDownload('counted', { day: '2026-12-07', key: 'a' })).toBe(false);
    expect(await downloads()).toBe(1);
    expect(await store.countDownload('counted', { day: '2026-12-07', key: 'b' })).toBe(true);
    expect(await store.countDownload('counted', { day: '2026-12-08', key: 'a' })).toBe(true);
    expect(await store.countDownload('counted', { day: '2026-12-08', key: 'a' })).toBe(false);
    expect(await downloads()).toBe(3);
  });

  it('pages a listing in every order as one long list does, leaving out the nodes of a banned publisher', async () => {
    const store = await fresh();
    for (let i = 0; i < 23; i++) {
      await publish(store, `paged-${i}`, '1.0.0', i % 5 === 0 ? 'other' : 'acme', {
        name: i % 3 ? `Name ${(i * 7) % 11}` : undefined,
      });
      for (let d = 0; d < i % 4; d++) await store.countDownload(`paged-${i}`, { day: '2026-12-07', key: `${i}-${d}` });
    }
    await store.updatePublisher('other', { status: 'PublisherStatusBanned' });
    for (const sort of ['created_at', 'downloads', 'rating', 'name', 'search_ranking'] as const) {
      const whole = await store.listNodes({ sort, offset: 0, limit: 100 });
      expect(whole.total, sort).toBe(18);
      expect(
        whole.rows.every((node) => node.publisher_id === 'acme'),
        sort,
      ).toBe(true);
      const pages = [];
      for (let offset = 0; offset < 20; offset += 7) {
        const page = await store.listNodes({ sort, offset, limit: 7 });
        expect(page.total).toBe(18);
        pages.push(...page.rows);
      }
      expect(
        pages.map((node) => node.id),
        sort,
      ).toEqual(whole.rows.map((node) => node.id));
    }
  });

  it('keeps the count of listed nodes exact across node and publisher creates, deletes, bans and unbans (random steps, fixed seed)', async () => {
    const store = await fresh();
    const publishers = ['acme', 'other', 'third'];
    const step = fc.oneof(
      fc.record({ kind: fc.constant('publish' as const), publisher: fc.constantFrom(...publishers) }),
      fc.record({ kind: fc.constant('node' as const), pick: fc.nat(), status: fc.constantFrom(...NODE_STATUS) }),
      fc.record({
        kind: fc.constant('publisher' as const),
        publisher: fc.constantFrom(...publishers),
        status: fc.constantFrom(...PUBLISHER_STATUS),
      }),
    );
    const nodes: string[] = [];
    let listedAtLeastOnce = 0;
    for (const [i, s] of fc.sample(step, { seed: 11, numRuns: 80 }).entries()) {
      if (i === 20) await store.createPublisher('third', {}, 'u1'); // a publisher created midway
      if (s.kind === 'publish' && (s.publisher !== 'third' || i > 20)) {
        nodes.push(`counted-${i}`);
        await publish(store, `counted-${i}`, '1.0.0', s.publisher);
      } else if (s.kind === 'node' && nodes.length)
        await store.updateNode(nodes[s.pick % nodes.length], { status: s.status });
      else if (s.kind === 'publisher' && (s.publisher !== 'third' || i > 20))
        await store.updatePublisher(s.publisher, { status: s.status });
      // the count against the rows the list holds (chosen by the listing's own test, not the counter)
      const page = await store.listNodes({ sort: 'created_at', offset: 0, limit: 1000 });
      expect(page.total, `after step ${i}: ${JSON.stringify(s)}`).toBe(page.rows.length);
      listedAtLeastOnce = Math.max(listedAtLeastOnce, page.total);
    }
    expect(listedAtLeastOnce).toBeGreaterThan(3);
  });

  it('keeps the count of listed nodes exact when a ban and unban race new nodes of that publisher', async () => {
    const store = await fresh();
    await Promise.all([
      ...Array.from({ length: 24 }, (_, i) => publish(store, `raced-${i}`, '1.0.0', 'other')),
      ...Array.from({ length: 6 }, (_, i) =>
        store.updatePublisher('other', { status: i % 2 ? 'PublisherStatusActive' : 'PublisherStatusBanned' }),
      ),
    ]);
    for (const status of ['PublisherStatusBanned', 'PublisherStatusActive'] as const) {
      await store.updatePublisher('other', { status });
      const page = await store.listNodes({ sort: 'created_at', offset: 0, limit: 100 });
      expect(page.total, status).toBe(page.rows.length);
      expect(page.total, status).toBe(status === 'PublisherStatusActive' ? 24 : 0);
    }
  });

  it('members join by invitation: accepted once, racing accepts make one member; users found by id, e-mail or name', async () => {
    const store = await fresh();
    await store.createUser({ id: 'u3', name: 'three', email: 'Three@Example.org' });
    expect((await store.findUsers('u3')).map((u) => u.id)).toEqual(['u3']);
    expect((await store.findUsers('three@example.ORG')).map((u) => u.id)).toEqual(['u3']);
    expect((await store.findUsers('three')).map((u) => u.id)).toEqual(['u3']);
    expect(await store.findUsers('nobody')).toEqual([]);

    const outcome = await store.invite({ publisherId: 'acme', userId: 'u3', role: 'member', invitedBy: 'u1' });
    expect(outcome).toMatchObject({
      kind: 'invited',
      invitation: {
        publisher: { id: 'acme', name: 'Acme' },
        user: { id: 'u3', name: 'three' },
        role: 'member',
        invited_by: { id: 'u1', name: 'one' },
      },
    });
    // inviting again renews it with the new role; no membership until accepted
    await store.invite({ publisherId: 'acme', userId: 'u3', role: 'owner', invitedBy: 'u1' });
    expect(await store.getRole('acme', 'u3')).toBeUndefined();
    expect((await store.listInvitations({ userId: 'u3' })).map((i) => [i.publisher.id, i.role])).toEqual([
      ['acme', 'owner'],
    ]);
    expect((await store.listInvitations({ publisherId: 'acme' })).map((i) => i.user.id)).toEqual(['u3']);

    const accepts = await Promise.all([1, 2, 3, 4].map(() => store.acceptInvitation('acme', 'u3')));
    expect(accepts.filter(Boolean)).toHaveLength(1);
    expect(await store.getRole('acme', 'u3')).toBe('owner');
    expect(await store.listInvitations({ userId: 'u3' })).toEqual([]);
    // a member's role changes at once; the last owner stays
    expect(await store.invite({ publisherId: 'acme', userId: 'u3', role: 'member', invitedBy: 'u1' })).toMatchObject({
      kind: 'member',
      member: { role: 'member' },
    });
    expect(await store.invite({ publisherId: 'other', userId: 'u2', role: 'member', invitedBy: 'u2' })).toBe(
      'last-owner',
    );

    await store.invite({ publisherId: 'other', userId: 'u3', role: 'member', invitedBy: 'u2' });
    expect(await store.removeInvitation('other', 'u3')).toBe(true);
    expect(await store.removeInvitation('other', 'u3')).toBe(false);
    expect(await store.acceptInvitation('other', 'u3')).toBeUndefined();
  });

  it("removing a member revokes the publisher's tokens that member created, and no other", async () => {
    const store = await fresh();
    await store.setMember('acme', 'u2', 'owner');
    await store.createToken({
      kind: 'pat',
      userId: 'u2',
      publisherId: 'acme',
      name: 'gone',
      hash: 'h-gone',
      prefix: 'p',
    });
    await store.createToken({
      kind: 'pat',
      userId: 'u1',
      publisherId: 'acme',
      name: 'kept',
      hash: 'h-kept',
      prefix: 'p',
    });
    await store.createToken({
      kind: 'pat',
      userId: 'u2',
      publisherId: 'other',
      name: 'elsewhere',
      hash: 'h-else',
      prefix: 'p',
    });
    await store.createToken({ kind: 'user', userId: 'u2', name: 'own', hash: 'h-own', prefix: 'p' });
    expect(await store.removeMember('acme', 'u2')).toBe('removed');
    expect(await store.useToken('h-gone')).toBeUndefined();
    for (const hash of ['h-kept', 'h-else', 'h-own']) expect(await store.useToken(hash), hash).toBeDefined();
  });

  it('never leaves a publisher without an owner', async () => {
    const store = await fresh();
    expect(await store.setMember('acme', 'u2', 'member')).toMatchObject({ role: 'member', user: { id: 'u2' } });
    expect(await store.setMember('acme', 'u1', 'member')).toBe('last-owner');
    expect(await store.removeMember('acme', 'u1')).toBe('last-owner');
    expect(await store.removeMember('acme', 'u2')).toBe('removed');
    expect(await store.removeMember('acme', 'u2')).toBe('not-member');
    expect(await store.createPublisher('acme', {}, 'u2')).toBe('exists');
  });

  it('keeps one live bootstrap token for the admin', async () => {
    const store = await fresh();
    await store.ensureBootstrapAdmin('admin', 'a'.repeat(64), 'nrg_u_a');
    await store.ensureBootstrapAdmin('admin', 'b'.repeat(64), 'nrg_u_b');
    expect(await store.useToken('a'.repeat(64))).toBeUndefined();
    expect(await store.useToken('b'.repeat(64))).toMatchObject({ user: { id: 'admin', admin: true } });
  });
});
