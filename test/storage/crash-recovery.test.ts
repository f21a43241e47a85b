// kill -9 in the middle of a publish, upload and review load, then a restart on the same data dir:
// every acknowledged write is there, the database is sound, the archive files and the database agree
// (no orphan, no temp file), and uploads that were cut can be retried. Plus the two exact moments of
// an upload where a crash could leave the file and the database disagreeing.
import { createHash, randomBytes } from 'node:crypto';
import { CLAIM_KEY } from '../../src/server/archives/registry-claim.js';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempDir, type TestServer } from '../helpers.js';
import { addMember, call, createPublisher, createUser, publish, uploadTo, type TestUser } from '../server/fixtures.js';
import { startChild, storedZip, type ChildServer } from '../server/child.js';
import { figure, runs, SEED } from '../figures.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const asServer = (child: ChildServer) => ({ url: child.url, adminToken: child.adminToken }) as TestServer;

/** A small seeded generator, so a failing cycle can be replayed. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Every file under the archive dir, relative to it, but the storage's claim. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !(entry.name === CLAIM_KEY && entry.parentPath === dir))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split('\\').join('/'));
}

/** The database and the archive dir agree, and the database is sound. */
function checkDataDir(dataDir: string): { archives: number } {
  const db = new Database(join(dataDir, 'registry.db'), { readonly: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('foreign_key_check')).toEqual([]);
    expect(db.prepare('SELECT count(*) AS n FROM archive_claims').get()).toEqual({ n: 0 });
    const recorded = db
      .prepare(
        `SELECT n.publisher_id || '/' || n.id || '/' || v.version || '/node.zip' AS key, v.archive_sha256 AS sha
         FROM versions v JOIN nodes n ON n.id = v.node_id WHERE v.archive_sha256 IS NOT NULL`,
      )
      .all() as { key: string; sha: string }[];
    const files = filesUnder(join(dataDir, 'archives'));
    // no temp file left, no file without its record, no record without its file
    expect(files.filter((file) => file.startsWith('.tmp/'))).toEqual([]);
    expect(files.sort()).toEqual(recorded.map((row) => row.key).sort());
    for (const row of recorded) expect(sha256(readFileSync(join(dataDir, 'archives', row.key))), row.key).toBe(row.sha);
    return { archives: recorded.length };
  } finally {
    db.close();
  }
}

interface VersionLedger {
  nodeId: string;
  version: string;
  /** The sha of the upload acknowledged (200). */
  uploaded?: string;
  /** The sha of the upload sent and not answered when the server died. */
  inFlight?: string;
}
interface ReviewLedger {
  nodeId: string;
  acknowledged: number;
  inFlight?: number;
}

// Each server here is a process of its own that loads the server's TypeScript sources through tsx as it starts
// (test/server/child.ts): about a second on an idle machine, 5-8 s at a load of 12, more when the load peaks. The
// timeouts allow each start that much, not a slow server: nothing here is timed.
const START_ALLOWANCE_MS = 30_000;

describe('kill -9 at the two moments an upload could leave the file and the database disagreeing', () => {
  it('after the file is in place, before the database records it: rolled back at start, the upload can be retried; after the record: kept whole', {
    timeout: 30_000 + 3 * START_ALLOWANCE_MS,
  }, async () => {
    const dataDir = tempDir('nodereg-crash-');
    const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
    let child = await startChild(dataDir, { adminToken });
    let server = asServer(child);
    const owner = await createUser(server, 'crash-owner');
    await createPublisher(server, owner, 'crash-co');

    // 1. Killed with the file in place and no record in the database.
    const published = await publish(server, owner.token, 'crash-co', 'fragile', '1.0.0');
    expect(published.status, published.text).toBe(201);
    await child.crashAt('archive-stored');
    await expect(uploadTo(published.body.signedUrl, await storedZip({ 'first.py': 'print(1)\n' }))).rejects.toThrow();
    expect((await child.exited).signal).toBe('SIGKILL');
    const key = join(dataDir, 'archives/crash-co/fragile/1.0.0/node.zip');
    expect(existsSync(key)).toBe(true); // the crash came with the file in place

    child = await startChild(dataDir, { adminToken });
    server = asServer(child);
    expect(existsSync(key)).toBe(false);
    checkDataDir(dataDir);
    const version = await call(server.url, 'GET', '/nodes/fragile/versions/1.0.0', { token: owner.token });
    expect(version.status).toBe(200);
    expect(version.body.archive_sha256).toBeUndefined();
    expect(version.body.status).toBe('NodeVersionStatusPending');
    // The same version number still works: publish again, upload other bytes.
    const again = await publish(server, owner.token, 'crash-co', 'fragile', '1.0.0');
    expect(again.status, again.text).toBe(201);
    const second = await storedZip({ 'second.py': 'print(2)\n' });
    const uploaded = await uploadTo(again.body.signedUrl, second);
    expect(uploaded.status, uploaded.text).toBe(200);
    const download = await fetch(`${server.url}/archives/crash-co/fragile/1.0.0/node.zip`);
    expect(Buffer.from(await download.arrayBuffer()).equals(second)).toBe(true);

    // 2. Killed after the database recorded the archive, before the answer.
    const next = await publish(server, owner.token, 'crash-co', 'fragile', '2.0.0');
    await child.crashAt('archive-recorded');
    const third = await storedZip({ 'third.py': 'print(3)\n' });
    await expect(uploadTo(next.body.signedUrl, third)).rejects.toThrow();
    expect((await child.exited).signal).toBe('SIGKILL');

    child = await startChild(dataDir, { adminToken });
    server = asServer(child);
    try {
      expect(readFileSync(join(dataDir, 'archives/crash-co/fragile/2.0.0/node.zip')).equals(third)).toBe(true);
      const recorded = await call(server.url, 'GET', '/nodes/fragile/versions/2.0.0', { token: owner.token });
      expect(recorded.body).toMatchObject({
        archive_sha256: sha256(third),
        archive_size: third.length,
        status: 'NodeVersionStatusActive',
      });
      expect((await publish(server, owner.token, 'crash-co', 'fragile', '2.0.0')).status).toBe(409);
      expect(checkDataDir(dataDir).archives).toBe(2);
    } finally {
      await child.close();
    }
  });
});

describe('kill -9 under load', () => {
  const CYCLES = runs(2, 25);
  const WORKERS = runs(6, 12);

  it(`keeps every acknowledged write through ${CYCLES} crashes`, {
    timeout: 60_000 + (CYCLES + 1) * (START_ALLOWANCE_MS + 20_000),
  }, async () => {
    const dataDir = tempDir('nodereg-crash-');
    const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
    const versions: VersionLedger[] = [];
    const reviews = new Map<string, ReviewLedger>();
    const users: TestUser[] = [];
    const totals = { publishes: 0, uploads: 0, reviews: 0, retried: 0, completedUnacknowledged: 0, cutInFlight: 0 };

    let child = await startChild(dataDir, { adminToken });
    const owner = await createUser(asServer(child), 'load-owner');
    await createPublisher(asServer(child), owner, 'load-co');
    // the reviewed nodes belong to another publisher: members may not review their own publisher's nodes
    const targetOwner = await createUser(asServer(child), 'target-owner');
    await createPublisher(asServer(child), targetOwner, 'target-co');
    for (let w = 0; w < WORKERS; w++) {
      const user = await createUser(asServer(child), `load-user-${w}`);
      await addMember(asServer(child), owner, 'load-co', user);
      users.push(user);
      // each worker reviews its own node, so the node's rating is that user's star
      const target = `target-${w}`;
      expect((await publish(asServer(child), targetOwner.token, 'target-co', target, '1.0.0')).status).toBe(201);
      reviews.set(user.id, { nodeId: target, acknowledged: 0 });
    }

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const rand = random(SEED + cycle);
      const server = asServer(child);
      let stopped = false;
      const worker = async (w: number) => {
        const user = users[w];
        const review = reviews.get(user.id)!;
        for (let i = 0; !stopped; i++) {
          try {
            const nodeId = `load-${w}`;
            const version = `${cycle + 1}.${i}.0`;
            const published = await publish(server, user.token, 'load-co', nodeId, version);
            expect(published.status, published.text).toBe(201);
            const entry: VersionLedger = { nodeId, version };
            versions.push(entry);
            totals.publishes++;
            // Sizes up to ~1.5 MiB of incompressible bytes, so that uploads are often in flight at the kill.
            const zip = await storedZip({
              'data.bin': randomBytes(Math.floor(rand() * 1_500_000)),
              '__init__.py': `# ${version}\n`,
            });
            entry.inFlight = sha256(zip);
            const uploaded = await uploadTo(published.body.signedUrl, zip);
            expect(uploaded.status, uploaded.text).toBe(200);
            entry.uploaded = entry.inFlight;
            entry.inFlight = undefined;
            totals.uploads++;
            const star = 1 + Math.floor(rand() * 5);
            review.inFlight = star;
            const reviewed = await call(server.url, 'POST', `/nodes/${review.nodeId}/reviews?star=${star}`, {
              token: user.token,
            });
            expect(reviewed.status, reviewed.text).toBe(200);
            review.acknowledged = star;
            review.inFlight = undefined;
            totals.reviews++;
          } catch (error) {
            if (!stopped) throw error; // a refusal or a network error before the kill is a failure
            return; // the server died: this worker's last request was cut
          }
        }
      };
      const load = Promise.all(users.map((_, w) => worker(w)));
      await new Promise((r) => setTimeout(r, 300 + rand() * 1200));
      stopped = true;
      await child.kill();
      await load;

      child = await startChild(dataDir, { adminToken });
      const after = asServer(child);
      // Every acknowledged publish and upload is there; an upload cut in flight either completed whole
      // (the crash came after its record) or left no archive, and can then be retried.
      for (const entry of versions) {
        const reply = await call(after.url, 'GET', `/nodes/${entry.nodeId}/versions/${entry.version}`, {
          token: adminToken,
        });
        expect(reply.status, `${entry.nodeId}@${entry.version}: ${reply.text}`).toBe(200);
        if (entry.uploaded) {
          expect(reply.body.archive_sha256, `${entry.nodeId}@${entry.version}`).toBe(entry.uploaded);
          continue;
        }
        if (entry.inFlight) totals.cutInFlight++;
        if (reply.body.archive_sha256 !== undefined) {
          expect(reply.body.archive_sha256, `${entry.nodeId}@${entry.version}`).toBe(entry.inFlight);
          entry.uploaded = entry.inFlight;
          totals.completedUnacknowledged++;
        } else {
          const again = await publish(after, owner.token, 'load-co', entry.nodeId, entry.version);
          expect(again.status, again.text).toBe(201);
          const zip = await storedZip({ 'retry.py': `# ${entry.version}\n` });
          const uploaded = await uploadTo(again.body.signedUrl, zip);
          expect(uploaded.status, uploaded.text).toBe(200);
          entry.uploaded = sha256(zip);
          totals.retried++;
        }
        entry.inFlight = undefined;
      }
      for (const review of reviews.values()) {
        const node = await call(after.url, 'GET', `/nodes/${review.nodeId}`);
        const possible = [review.acknowledged, review.inFlight].filter((star) => star !== undefined);
        expect(possible, `rating of ${review.nodeId}`).toContain(node.body.rating);
        review.acknowledged = node.body.rating;
        review.inFlight = undefined;
      }
      // Downloads give the acknowledged bytes (a sample: the latest of each node).
      const latest = new Map(versions.map((entry) => [entry.nodeId, entry]));
      for (const entry of latest.values()) {
        const download = await fetch(`${after.url}/archives/load-co/${entry.nodeId}/${entry.version}/node.zip`, {
          headers: { authorization: `Bearer ${adminToken}` },
        });
        expect(download.status).toBe(200);
        expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(entry.uploaded);
      }
      expect(statSync(join(dataDir, 'archives/.tmp')).isDirectory()).toBe(true);
      checkDataDir(dataDir);
    }
    await child.close();
    checkDataDir(dataDir);

    figure('crash.cycles', CYCLES, `kill -9 under load of ${WORKERS} concurrent clients, restart on the same data dir`);
    figure(
      'crash.acknowledged_writes_verified',
      totals.publishes + totals.uploads + totals.reviews,
      `${totals.publishes} publishes, ${totals.uploads} uploads, ${totals.reviews} reviews`,
    );
    figure(
      'crash.uploads_cut',
      totals.cutInFlight,
      `${totals.retried} retried after restart, ${totals.completedUnacknowledged} found whole (recorded before the kill)`,
    );
    expect(totals.publishes).toBeGreaterThan(0);
  });
});
