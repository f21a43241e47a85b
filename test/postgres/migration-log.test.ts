// An operator hears of a PostgreSQL schema change: one line when a start makes the schema or upgrades it
// (naming the migrations), and none when the schema is current.
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { connectPostgres } from '../../src/server/store/postgres-registry-store.js';
import { postgresMigrations } from '../../src/server/store/postgres-migrations.js';
import { testPostgres } from '../postgres.js';

const postgresServer = testPostgres();
const latest = postgresMigrations.length;

describe.skipIf(!postgresServer)('PostgreSQL migrations', () => {
  it('are logged when they run: a new database, then nothing, then an upgrade with its warning', async () => {
    const url = await (await postgresServer!).database();
    const start = async () => {
      const lines: string[] = [];
      await (await connectPostgres(url, (line) => lines.push(line))).close();
      return lines;
    };
    expect(await start()).toEqual([`made the PostgreSQL schema (${latest} migrations)`]);
    expect(await start()).toEqual([]);

    // as if the database had been left by the nodereg before the last migration
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql`DELETE FROM schema_migrations WHERE version = ${latest}`;
    await sql.end();
    expect(await start()).toEqual([
      `migrated the PostgreSQL database from schema ${latest - 1} to ${latest} (${postgresMigrations[latest - 1].name}): an older nodereg refuses it from now on (keep a backup to go back)`,
    ]);
  });
});
