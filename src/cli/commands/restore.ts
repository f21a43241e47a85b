import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { RESTORE_DEADLINE_MS } from '../../shared/tuning.js';
import { formatSize } from '../../contract/size.js';
import { backendOption, backendUrl, missingDatabase, withBackend, type BackendUrl } from '../backend-urls.js';
import type { DatabaseTarget, StorageTarget } from '../../server/backends.js';
import type { RestoreReport } from '../../server/restore.js';
import { withoutUrlSecrets } from '../../shared/url.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT, exitCodesHelp, invalidInput } from '../errors.js';
import { shellWord } from '../invocation.js';
import { MakeDirError } from '../../shared/make-dirs.js';
import { examples } from '../examples.js';

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/** A dir beside `source` that does not exist yet: backup refuses one that holds files (an earlier snapshot). */
function newSnapshotDir(source: string): string {
  for (let n = 1; ; n++) {
    const dir = n === 1 ? `${source}-snapshot` : `${source}-snapshot-${n}`;
    if (!existsSync(dir)) return dir;
  }
}

/**
 * The hint for a source a running server holds: back it up to a snapshot, then run this restore from
 * the snapshot with the flags typed. A database URL is read from the variable, never printed: its
 * password may sit in the user info or in the query (`?password=`).
 */
function snapshotHint(source: string, flags: { database?: string; storage?: string }): string {
  const snapshot = newSnapshotDir(source);
  const database = flags.database;
  const hidden = database?.includes('://') ?? false;
  const typed = [
    database === undefined ? '' : ` --database ${hidden ? '"$NODEREG_DATABASE_URL"' : shellWord(database)}`,
    flags.storage === undefined ? '' : ` --storage ${shellWord(flags.storage)}`,
  ].join('');
  return (
    `stop that server first, or restore from a snapshot: \`nodereg backup --data-dir ${shellWord(source)} ${shellWord(snapshot)}\`, ` +
    `then \`nodereg restore ${shellWord(snapshot)}${typed}\`${hidden ? ' with NODEREG_DATABASE_URL set to the --database URL' : ''}`
  );
}

/** What a failed restore ends the command with: the user's to fix (the flag or the target named), or a failure to retry. */
function restoreFailure(
  error: unknown,
  databaseUrl: BackendUrl,
  target: string,
  RestoreError: typeof import('../../server/restore.js').RestoreError,
  busyHint: string,
): Error {
  if (error instanceof CliError) return error;
  if (error instanceof MakeDirError)
    return invalidInput(`${databaseUrl.name}: ${error.message}`, 'restore into a new directory you can write to');
  if (error instanceof RestoreError) {
    const exit = { source: EXIT.invalid, busy: EXIT.conflict, conflict: EXIT.conflict, archive: EXIT.failure }[
      error.kind
    ];
    return new CliError(
      `${error.message}; the target database was left as it was`,
      exit,
      `restore_${error.kind}`,
      error.kind === 'busy' ? busyHint : error.hint,
    );
  }
  const missing = missingDatabase(databaseUrl, error, 'run the same restore');
  if (missing) return missing;
  return new CliError(
    `restore into ${target} failed: ${(error as Error).message}; the target database was left as it was, run the same restore again`,
    EXIT.failure,
    'restore',
  );
}

/** What the restore did, and the command that serves the result. */
function printRestored(
  ctx: Ctx,
  source: string,
  target: string,
  database: DatabaseTarget,
  storage: StorageTarget,
  storageUrl: BackendUrl,
  databaseUrl: BackendUrl,
  report: RestoreReport,
): void {
  const storageText = storage.kind === 'local' ? storage.dir : storageUrl.text;
  const adminFile = join(source, 'admin-token');
  // A URL with a user or password is never printed: the line reads it from the variable serve reads too (docs/decisions.md).
  const hidden = database.kind === 'postgres' && target !== database.url;
  const serveLine =
    database.kind === 'postgres'
      ? `${report.adminToken ? `NODEREG_ADMIN_TOKEN="$(cat ${shellWord(adminFile)})" ` : ''}nodereg serve --database ${hidden ? '"$NODEREG_DATABASE_URL"' : shellWord(target)} --storage ${shellWord(storageText)}` +
        (hidden && databaseUrl.name === '--database'
          ? `\n  (with NODEREG_DATABASE_URL set to the --database URL first: its user and password are not printed)`
          : '')
      : `nodereg serve --data-dir ${shellWord(report.dataDir!)}${database.path === join(report.dataDir!, 'registry.db') ? '' : ` --database ${shellWord(database.path)}`}${storage.kind === 'local' && storage.dir === join(report.dataDir!, 'archives') ? '' : ` --storage ${shellWord(storageText)}`}`;
  const sizes = Object.entries(report.tables)
    .map(([name, rows]) => `${name} ${rows}`)
    .join(', ');
  ctx.out.result(
    { source, database: target, storage: storageText, ...report },
    [
      `restored ${source} into ${target}:`,
      `  rows        ${plural(report.rows, 'row')} in ${plural(Object.keys(report.tables).length, 'table')} (${sizes}), in one transaction`,
      `  archives    ${plural(report.archives.files, 'file')}, ${formatSize(report.archives.bytes)}, each SHA-256 checked, into ${storageText}`,
      `  AI results  ${plural(report.results.files, 'file')}, ${formatSize(report.results.bytes)}${report.results.missing ? ` (${report.results.missing} without a file)` : ''}`,
      database.kind === 'postgres'
        ? '  secret      into the database'
        : `  secret      ${join(report.dataDir!, 'secret')}`,
      report.adminToken
        ? database.kind === 'postgres'
          ? `  admin token ${adminFile}: give it to every instance as NODEREG_ADMIN_TOKEN (one started without the variable keeps it too)`
          : `  admin token ${join(report.dataDir!, 'admin-token')}`
        : '  admin token none in the source (NODEREG_ADMIN_TOKEN was used)',
      `serve it: ${serveLine}`,
    ].join('\n'),
  );
}

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('restore <source>')
    .description(
      "copy a registry data dir (one `nodereg backup` made, or a stopped server's) into PostgreSQL and S3, or into a new SQLite data dir",
    )
    .addOption(
      backendOption(
        'database',
        `where the registry goes: postgres://user:pass@host:port/db (an empty database; a statement it leaves unanswered for ${RESTORE_DEADLINE_MS / 1000} s fails the restore), or a new SQLite file whose dir becomes a data dir (DIR/registry.db)`,
      ),
    )
    .addOption(
      backendOption(
        'storage',
        'where the archives go: s3://bucket/prefix or a directory (default with SQLite: DIR/archives beside the database; needed with PostgreSQL)',
      ),
    )
    .action(async (sourceArg: string, flags: { database?: string; storage?: string }) => {
      const source = resolve(sourceArg);
      const backends = await import('../../server/backends.js');
      const databaseUrl = backendUrl(ctx.env, flags, 'database');
      if (!databaseUrl)
        throw invalidInput(
          'restore needs --database (or NODEREG_DATABASE_URL): the database the registry goes into',
          '--database postgres://user:pass@host:5432/db, or --database NEWDIR/registry.db',
        );
      const database = (await withBackend(databaseUrl, backends.parseDatabaseUrl))!;
      let storageUrl = backendUrl(ctx.env, flags, 'storage');
      if (!storageUrl) {
        if (database.kind === 'postgres')
          throw invalidInput(
            'with --database postgres://… restore needs --storage (or NODEREG_STORAGE_URL): where the archives go',
            '--storage s3://bucket/prefix, the same URL the instances will serve with',
          );
        storageUrl = { text: join(dirname(database.path), 'archives'), name: 'the archive dir' };
      }
      const storage = (await withBackend(storageUrl, backends.parseStorageUrl))!;
      const target = database.kind === 'postgres' ? withoutUrlSecrets(database.url) : database.path;

      const { restore, RestoreError } = await import('../../server/restore.js');
      let report: Awaited<ReturnType<typeof restore>>;
      try {
        report = await restore({
          source,
          database,
          storage: async () => (await withBackend(storageUrl, () => backends.openStorageTarget(storage, ctx.env)))!,
          say: (line) => ctx.out.info(line),
        });
      } catch (error) {
        throw restoreFailure(error, databaseUrl, target, RestoreError, snapshotHint(source, flags));
      }

      printRestored(ctx, source, target, database, storage, storageUrl, databaseUrl, report);
    });
  command.addHelpText('after', exitCodesHelp('restore'));
  examples(command, [
    'nodereg backup ./snapshot && nodereg restore ./snapshot --database postgres://nodereg:secret@db.internal:5432/nodereg --storage s3://registry-archives/prod',
    'NODEREG_DATABASE_URL=postgres://… NODEREG_STORAGE_URL=s3://bucket/prefix nodereg restore ~/.local/share/nodereg',
    'nodereg restore ./snapshot --database ./new-data/registry.db',
  ]);
}
