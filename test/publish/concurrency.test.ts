// Many clients at once against one registry: the same version published and uploaded by 50 clients
// (exactly one archive wins, the others are 409, one version row, the winner's bytes); 1,000 reviews
// from 100 users (the rating is the mean of each user's last review); partial updates of different
// fields at once (none is lost).
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import {
  addMember,
  call,
  createPat,
  createPublisher,
  createUser,
  publish,
  uploadTo,
  type TestUser,
} from '../server/fixtures.js';
import { storedZip } from '../server/child.js';
import { figure, runs } from '../figures.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let server: TestServer;
let owner: TestUser;

beforeAll(async () => {
  server = await startServer();
  owner = await createUser(server, 'race-owner');
  await createPublisher(server, owner, 'race-co');
});
afterAll(() => server.close());

function statusCounts(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

describe('50 clients publish the same version at once, then each uploads its own archive', () => {
  const CLIENTS = 50;
  const ROUNDS = runs(3, 40);

  it(`exactly one upload wins, every other is 409, one version row holds the winner's bytes (${ROUNDS} rounds)`, {
    timeout: 60_000 + ROUNDS * 5_000,
  }, async () => {
    const tokens = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) => createPat(server, owner, 'race-co', `client-${i}`)),
    );
    let uploads = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const version = `1.${round}.0`;
      const published = await Promise.all(
        tokens.map((token) => publish(server, token, 'race-co', 'race-node', version)),
      );
      expect(statusCounts(published.map((reply) => reply.status))).toEqual({ 201: CLIENTS });
      const versionIds = new Set(published.map((reply) => reply.body.node_version.id));
      expect(versionIds.size, 'one version row').toBe(1);

      const zips = await Promise.all(
        tokens.map((_, i) => storedZip({ '__init__.py': `# client ${i} of round ${round}\n` })),
      );
      const uploaded = await Promise.all(published.map((reply, i) => uploadTo(reply.body.signedUrl, zips[i])));
      uploads += uploaded.length;
      expect(statusCounts(uploaded.map((reply) => reply.status))).toEqual({ 200: 1, 409: CLIENTS - 1 });
      for (const reply of uploaded.filter((r) => r.status === 409)) expect(reply.body.error).toBe('conflict');
      const winner = zips[uploaded.findIndex((reply) => reply.status === 200)];

      const download = await fetch(`${server.url}/archives/race-co/race-node/${version}/node.zip`);
      expect(Buffer.from(await download.arrayBuffer()).equals(winner), "the stored bytes are the winner's").toBe(true);
      const versions = await call(server.url, 'GET', '/nodes/race-node/versions');
      expect(versions.body.filter((v: { version: string }) => v.version === version)).toHaveLength(1);
      expect(versions.body.find((v: { version: string }) => v.version === version).archive_sha256).toBe(sha256(winner));
    }
    const db = server.server.db!;
    expect(db.prepare("SELECT count(*) AS n FROM versions WHERE node_id = 'race-node'").get()).toEqual({ n: ROUNDS });
    expect(db.prepare('SELECT count(*) AS n FROM archive_claims').get()).toEqual({ n: 0 });
    expect(readdirSync(join(server.dataDir, 'archives', '.tmp'))).toEqual([]);
    figure(
      'concurrency.same_version_clients',
      CLIENTS,
      `${ROUNDS} rounds, ${uploads} racing uploads, one winner per round`,
    );
  });
});

describe('1,000 reviews from 100 users', () => {
  const USERS = 100;
  const PER_USER = 10;
  let users: TestUser[];

  beforeAll(async () => {
    users = await Promise.all(Array.from({ length: USERS }, (_, i) => createUser(server, `reviewer-${i}`)));
    expect((await publish(server, owner.token, 'race-co', 'rated-node', '1.0.0')).status).toBe(201);
  });

  it('with each user reviewing again and again, all users at once: the rating is the mean of each last review', async () => {
    const last = new Map<string, number>();
    let accepted = 0;
    await Promise.all(
      users.map(async (user, u) => {
        for (let i = 0; i < PER_USER; i++) {
          const star = 1 + ((u * 7 + i * 3) % 5);
          const reply = await call(server.url, 'POST', `/nodes/rated-node/reviews?star=${star}`, { token: user.token });
          expect(reply.status, reply.text).toBe(200);
          last.set(user.id, star);
          accepted++;
        }
      }),
    );
    expect(accepted).toBe(USERS * PER_USER);
    const mean = [...last.values()].reduce((a, b) => a + b, 0) / last.size;
    const node = await call(server.url, 'GET', '/nodes/rated-node');
    expect(node.body.rating).toBeCloseTo(mean, 10);
  });

  it('with all 1,000 sent at the same moment: the rating is the mean of what is stored, one review per user, each one the user sent', async () => {
    const sent = new Map<string, Set<number>>();
    const replies = await Promise.all(
      users.flatMap((user, u) =>
        Array.from({ length: PER_USER }, (_, i) => {
          const star = 1 + ((u + i * 2) % 5);
          const stars = sent.get(user.id) ?? new Set<number>();
          sent.set(user.id, stars.add(star));
          return call(server.url, 'POST', `/nodes/rated-node/reviews?star=${star}`, { token: user.token });
        }),
      ),
    );
    expect(statusCounts(replies.map((reply) => reply.status))).toEqual({ 200: USERS * PER_USER });
    const stored = server.server
      .db!.prepare("SELECT user_id, star FROM reviews WHERE node_id = 'rated-node'")
      .all() as { user_id: string; star: number }[];
    expect(stored).toHaveLength(USERS);
    for (const row of stored) expect(sent.get(row.user_id)).toContain(row.star);
    const mean = stored.reduce((sum, row) => sum + row.star, 0) / stored.length;
    expect((await call(server.url, 'GET', '/nodes/rated-node')).body.rating).toBeCloseTo(mean, 10);
    figure(
      'concurrency.reviews',
      USERS * PER_USER * 2,
      `${USERS} users, ${PER_USER} reviews each, twice (100 and 1,000 in flight)`,
    );
  });
});

describe('partial updates of different fields at once', () => {
  const ROUNDS = runs(5, 100);
  const NODE_FIELDS: [string, (round: number) => unknown][] = [
    ['name', (r) => `Name ${r}`],
    ['description', (r) => `Description ${r}`],
    ['author', (r) => `Author ${r}`],
    ['category', (r) => `Category ${r}`],
    ['license', (r) => `MIT-${r}`],
    ['repository', (r) => `https://example.org/repo/${r}`],
    ['icon', (r) => `https://example.org/icon/${r}.png`],
    ['banner_url', (r) => `https://example.org/banner/${r}.png`],
    ['tags', (r) => [`tag-${r}`, 'shared']],
    ['supported_os', (r) => (r % 2 ? ['linux'] : ['windows', 'macos'])],
    ['supported_accelerators', (r) => [`accel-${r}`]],
    ['supported_appui_version', (r) => `>=${r}.0.0`],
    ['supported_appui_frontend_version', (r) => `>=1.${r}.0`],
    ['preempted_app_node_names', (r) => [`Preempted${r}`]],
    ['translations', (r) => ({ fr: { name: `Nom ${r}` } })],
  ];
  const PUBLISHER_FIELDS: [string, (round: number) => unknown][] = [
    ['name', (r) => `Race Co ${r}`],
    ['description', (r) => `About ${r}`],
    ['logo', (r) => `https://example.org/logo/${r}.png`],
    ['source_code_repo', (r) => `https://example.org/src/${r}`],
    ['support', (r) => `support-${r}@example.org`],
    ['website', (r) => `https://example.org/${r}`],
  ];

  it(`keeps every field of a node, a publisher and a version (${ROUNDS} rounds)`, async () => {
    const member = await createUser(server, 'race-member');
    await addMember(server, owner, 'race-co', member);
    const pat = await createPat(server, owner, 'race-co', 'updater');
    const writers = [owner.token, member.token, pat, server.adminToken];
    const published = await publish(server, owner.token, 'race-co', 'busy-node', '1.0.0');
    expect(published.status).toBe(201);
    let updates = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const replies = await Promise.all([
        ...NODE_FIELDS.map(([field, value], i) =>
          call(server.url, 'PUT', '/publishers/race-co/nodes/busy-node', {
            token: writers[i % writers.length],
            body: { [field]: value(round) },
          }),
        ),
        ...PUBLISHER_FIELDS.map(([field, value]) =>
          call(server.url, 'PUT', '/publishers/race-co', { token: owner.token, body: { [field]: value(round) } }),
        ),
        call(server.url, 'PUT', '/publishers/race-co/nodes/busy-node/versions/1.0.0', {
          token: member.token,
          body: { changelog: `Changes ${round}` },
        }),
        call(server.url, 'PUT', '/publishers/race-co/nodes/busy-node/versions/1.0.0', {
          token: pat,
          body: { deprecated: round % 2 === 1 },
        }),
      ]);
      for (const reply of replies) expect(reply.status, reply.text).toBe(200);
      updates += replies.length;
      const node = (await call(server.url, 'GET', '/nodes/busy-node')).body;
      for (const [field, value] of NODE_FIELDS)
        expect(node[field], `node.${field} in round ${round}`).toEqual(value(round));
      const publisher = (await call(server.url, 'GET', '/publishers/race-co', { token: owner.token })).body;
      for (const [field, value] of PUBLISHER_FIELDS)
        expect(publisher[field], `publisher.${field} in round ${round}`).toEqual(value(round));
      const version = (await call(server.url, 'GET', '/nodes/busy-node/versions/1.0.0', { token: owner.token })).body;
      expect({ changelog: version.changelog, deprecated: version.deprecated }).toEqual({
        changelog: `Changes ${round}`,
        deprecated: round % 2 === 1,
      });
    }
    figure(
      'concurrency.partial_updates',
      updates,
      `${NODE_FIELDS.length + PUBLISHER_FIELDS.length + 2} fields written at once, ${ROUNDS} rounds, none lost`,
    );
  });
});
