// A data dir an older nodereg wrote is brought up to date at start, and serve's log says so: from which
// schema to which, and that an older nodereg refuses it from now on. An up-to-date one says nothing.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { migrations } from '../../src/server/store/migrations.js';
import { startServer } from '../helpers.js';
import { databaseBefore } from './old-schema.js';

it('logs the upgrade of an older registry.db once, naming the file and both schemas', async () => {
  const { file, db } = databaseBefore('generations', []);
  db.close();
  const dataDir = dirname(file);
  writeFileSync(join(dataDir, 'secret'), `${'ab'.repeat(32)}\n`, { mode: 0o600 });
  const before = migrations.findIndex((migration) => migration.name === 'generations');
  for (const expected of [[`upgraded the database ${file} from schema ${before} to ${migrations.length}: an older nodereg refuses it from now on (keep a backup to go back)`], []]) {
    const lines: string[] = [];
    const server = await startServer({ dataDir, log: (line) => lines.push(line), accessLog: false });
    await server.close();
    expect(lines.filter((line) => line.startsWith('upgraded'))).toEqual(expected);
  }
});
