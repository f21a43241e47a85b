// Seeds a data dir in bulk through the store code of dist/ (the schema and writes `serve` uses),
// in one transaction: N Active nodes with one Active version each, deterministic for a seed.
// Search terms of the scale benchmark: `relight` matches 1 node in 1,000 (at least one), `image`
// about 40% of nodes, `node` every node.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { random } from './lib.js';

const dist = new URL('../dist/server/', import.meta.url);

export const TERMS = { selective: 'relight', common: 'image', every: 'node' };

export async function seedStore(dataDir, count, { seed = 42 } = {}) {
  const { openDatabase } = await import(new URL('store/db.js', dist));
  const { createSqliteRegistryStore } = await import(new URL('store/sqlite-registry-store.js', dist));
  const { searchWords } = await import(new URL('store/search-words.js', dist));
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // the secret `serve` would make: a data dir with a database and no secret is refused as a cut-short backup
  writeFileSync(join(dataDir, 'secret'), randomBytes(32).toString('hex'), { mode: 0o600 });
  const db = openDatabase(join(dataDir, 'registry.db'));
  db.pragma('cache_size = -262144'); // 256 MiB: a bulk load that fits in memory does not spill mid-transaction
  const store = createSqliteRegistryStore(db);
  const next = random(seed);
  const pick = (list) => list[Math.floor(next() * list.length)];
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ren',
    'to',
    'va',
    'shi',
    'qu',
    'pel',
    'dor',
    'an',
    'ix',
    'zu',
    'bre',
    'fal',
    'gon',
  ];
  const words = Array.from({ length: 2000 }, () =>
    Array.from({ length: 2 + Math.floor(next() * 3) }, () => pick(syllables)).join(''),
  );
  const sentence = (n) => Array.from({ length: n }, () => pick(words)).join(' ');
  const publishers = Math.min(50, count);

  // Accounts through the store; nodes and versions with statements prepared once (the same
  // columns the store's publish and recordArchive write; the full-text triggers of the schema fire).
  await store.createUser({ id: 'seeder', name: 'seeder' });
  for (let p = 0; p < publishers; p++) await store.createPublisher(`pub-${p}`, { name: `Publisher ${p}` }, 'seeder');
  const insertNode = db.prepare(
    `INSERT INTO nodes (id, publisher_id, name, description, author, tags, status, downloads, created_at, updated_at, words)
     VALUES (?, ?, ?, ?, ?, ?, 'NodeStatusActive', ?, ?, ?, ?)`,
  );
  const insertVersion = db.prepare(
    `INSERT INTO versions (id, node_id, version, dependencies, status, archive_sha256, archive_size, uploaded_at, created_at)
     VALUES (?, ?, '1.0.0', '["numpy"]', 'NodeVersionStatusActive', ?, 1000, ?, ?)`,
  );
  const start = Date.parse('2024-01-01T00:00:00Z');
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = `${pick(words)}-${pick(words)}-${i}`;
      const description = [
        i % 1000 === 7 ? 'relight' : '',
        sentence(8 + Math.floor(next() * 20)),
        next() < 0.4 ? 'image' : '',
        sentence(4 + Math.floor(next() * 8)),
        'node',
      ]
        .filter(Boolean)
        .join(' ');
      const stamp = new Date(start + i * 60_000).toISOString();
      const tags = JSON.stringify([pick(words), pick(words)]);
      const name = `${pick(words)} ${pick(words)}`;
      insertNode.run(
        id,
        `pub-${i % publishers}`,
        name,
        description,
        `${pick(words)} ${pick(words)}`,
        tags,
        Math.floor(next() ** 3 * 100_000),
        stamp,
        stamp,
        searchWords(id, name),
      );
      insertVersion.run(randomUUID(), id, 'a'.repeat(64), stamp, stamp);
    }
  })();
  db.close();
}
