// References for the serve benchmark: the framework alone. A bare Hono app on @hono/node-server (what
// `nodereg serve` is built on) answering, to any request, the JSON in the file given. With
// `--reviews DIR` it also takes `POST /nodes/{id}/reviews?star=N` with the least a review can do: the
// bearer token's SHA-256 looked up in memory, then a SQLite write (WAL, synchronous=NORMAL, as serve
// opens it) of the user's star and the node's rating, one transaction per event-loop turn as serve's.
// Any token is taken: its first use registers it.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import Database from 'better-sqlite3';
import { Hono } from 'hono';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { reviews: { type: 'string' } },
});
const node = JSON.parse(readFileSync(positionals[0], 'utf8'));

const app = new Hono();
if (values.reviews) app.post('/nodes/:id/reviews', reviewRoute(values.reviews));
app.all('*', (c) => c.json(node));
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
  process.stdout.write(`listening on http://127.0.0.1:${info.port}\n`),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));

function reviewRoute(dir) {
  const db = new Database(join(dir, 'reviews.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE IF NOT EXISTS reviews (node_id TEXT, user_id TEXT, star INTEGER, PRIMARY KEY (node_id, user_id));
    CREATE TABLE IF NOT EXISTS ratings (node_id TEXT PRIMARY KEY, rating REAL)`);
  const upsert = db.prepare(
    'INSERT INTO reviews VALUES (?, ?, ?) ON CONFLICT (node_id, user_id) DO UPDATE SET star = excluded.star',
  );
  const rate = db.prepare(
    'INSERT OR REPLACE INTO ratings VALUES (:node, (SELECT avg(star) FROM reviews WHERE node_id = :node)) RETURNING rating',
  );
  // the reviews of one event-loop turn share a transaction (a commit costs more than a review), as serve's do
  const writeAll = db.transaction((batch) =>
    batch.map(({ nodeId, userId, star }) => (upsert.run(nodeId, userId, star), rate.get({ node: nodeId }).rating)),
  );
  let queued = [];
  const review = (nodeId, userId, star) =>
    new Promise((resolve) => {
      if (queued.length === 0)
        setImmediate(() => {
          const batch = queued;
          queued = [];
          writeAll(batch).forEach((rating, i) => batch[i].resolve(rating));
        });
      queued.push({ nodeId, userId, star, resolve });
    });
  const users = new Map();
  return async (c) => {
    const token = /^Bearer (\S+)$/.exec(c.req.header('authorization') ?? '')?.[1];
    const star = Number(c.req.query('star'));
    if (!token || !(star >= 1 && star <= 5)) return c.json({ error: 'bad request' }, 400);
    const hash = createHash('sha256').update(token).digest('hex');
    if (!users.has(hash)) users.set(hash, `user-${users.size}`);
    const rating = await review(c.req.param('id'), users.get(hash), star);
    return c.json({ ...node, rating });
  };
}
