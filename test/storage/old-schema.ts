// A registry database as the migrations before `name` left it, with one user and the publishers
// given, written in SQL: today's store writes today's schema only. For tests of one migration.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { expect } from 'vitest';
import { migrations } from '../../src/server/store/migrations.js';
import { searchWords } from '../../src/server/store/search-words.js';
import { tempDir } from '../helpers.js';

export function databaseBefore(
  name: string,
  publishers: string[],
): { file: string; db: Database.Database; now: string } {
  const file = join(tempDir(), 'registry.db');
  const db = new Database(file);
  db.pragma('foreign_keys = ON');
  // as db.ts registers it for migration 'search-words'
  db.function('search_words', { deterministic: true }, (id, name) =>
    searchWords(String(id), name === null ? null : String(name)),
  );
  const before = migrations.findIndex((migration) => migration.name === name);
  expect(before).toBeGreaterThan(0);
  for (const migration of migrations.slice(0, before)) db.exec(migration.sql);
  db.pragma(`user_version = ${before}`);
  const now = new Date().toISOString();
  db.prepare('INSERT INTO users (id, name, created_at) VALUES (?, ?, ?)').run('u', 'u', now);
  for (const id of publishers) db.prepare('INSERT INTO publishers (id, created_at) VALUES (?, ?)').run(id, now);
  return { file, db, now };
}
