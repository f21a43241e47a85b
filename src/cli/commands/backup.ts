import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { CLAIM_KEY } from '../../server/archives/registry-claim.js';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { formatSize } from '../../contract/size.js';
import {
  archivedVersions,
  archiveFile,
  BACKUP_COMPLETE,
  BACKUP_IN_PROGRESS,
  type ArchivedVersion,
} from '../../server/data-dir.js';
import { backendOption, backendUrl, withBackend } from '../backend-urls.js';
import type { Ctx } from '../context.js';
import { dataDirOption, defaultDataDir } from '../data-dir.js';
import { CliError, EXIT, exitCodeForSignal, invalidInput } from '../errors.js';
import { makeUserDir, userPath } from '../make-dir.js';
import { withCleanup, type Interrupts } from '../project.js';
import { examples } from '../examples.js';

/** Pages the database copy takes at a time: 4 MiB at SQLite's default page size, a few ms between two looks at a signal. */
const BACKUP_STEP_PAGES = 1024;

/** A SIGINT or SIGTERM stopped the database copy between two of its steps. */
class CopyInterrupted extends Error {
  constructor(
    readonly signal: unknown,
    readonly copied: number,
    readonly total: number,
  ) {
    super(`interrupted by ${String(signal)}`);
  }
}

/**
 * Copies a tree of immutable archives, skipping unfinished uploads; counts what it copied. A file at a
 * time, awaited: a SIGINT or SIGTERM is heard between two (withCleanup), not after the last.
 */
async function copyArchives(from: string, to: string, totals: { files: number; bytes: number }): Promise<void> {
  mkdirSync(to); // its parent is the backup's own dir, made just before
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    // The claim is the storage's, not the registry's: the served copy writes its own at start.
    if (entry.name === '.tmp' || entry.name === CLAIM_KEY) continue;
    const source = join(from, entry.name);
    if (entry.isDirectory()) await copyArchives(source, join(to, entry.name), totals);
    else if (entry.isFile()) {
      await copyFile(source, join(to, entry.name));
      totals.files++;
      totals.bytes += statSync(source).size;
    }
  }
}

/**
 * Fails when a version of the snapshot has no archive in the copy: serve keeps them elsewhere
 * (`--storage DIR`), and a backup without them would be called whole and lose every one.
 */
async function refuseMissingArchives(snapshot: string, copied: string, from: string): Promise<void> {
  const { default: Database } = await import('better-sqlite3');
  // Read-write, though it only reads: closing it then removes the -wal and -shm files a WAL database gets.
  const db = new Database(snapshot, { fileMustExist: true });
  let count: number;
  let missing: ArchivedVersion[];
  try {
    const archived = archivedVersions(db);
    count = archived.count;
    missing = [...archived.rows].filter((row) => !existsSync(archiveFile(copied, row)));
  } finally {
    db.close();
  }
  if (missing.length === 0) return;
  throw new CliError(
    `${missing.length} of ${count} archives are not in ${from} (${missing[0].node_id} ${missing[0].version} first): the backup would not be whole, so none was made`,
    EXIT.failure,
    'backup_archives',
    'if `nodereg serve` keeps the archives elsewhere (--storage DIR or NODEREG_STORAGE_URL), give backup the same --storage',
  );
}

/** Where serve keeps the registry: its SQLite file, and its archives dir (undefined for a bucket, which keeps its own). */
async function backupSources(ctx: Ctx, flags: { database?: string; storage?: string }, dataDir: string) {
  const databaseUrl = backendUrl(ctx.env, flags, 'database');
  let dbPath = join(dataDir, 'registry.db');
  if (databaseUrl !== undefined) {
    const { parseDatabaseUrl } = await import('../../server/backends.js');
    const target = (await withBackend(databaseUrl, parseDatabaseUrl))!;
    if (target.kind === 'postgres') {
      throw invalidInput(
        "nodereg backup copies SQLite registries only; a PostgreSQL registry is backed up with PostgreSQL's own tools",
        'run `pg_dump --format=custom --file registry.dump "$NODEREG_DATABASE_URL"` (restore with pg_restore), and turn on versioning of the bucket that holds the archives (or copy it with your S3 tool); keep the two together',
      );
    }
    dbPath = target.path;
  }
  // Where serve keeps the archives: a directory is copied; a bucket keeps its own (undefined here).
  const storageUrl = backendUrl(ctx.env, flags, 'storage');
  let archivesDir: string | undefined = join(dataDir, 'archives');
  if (storageUrl !== undefined) {
    const { parseStorageUrl } = await import('../../server/backends.js');
    const target = (await withBackend(storageUrl, parseStorageUrl))!;
    archivesDir = target.kind === 'local' ? target.dir : undefined;
  }
  return { dbPath, archivesDir, storageUrl };
}

/**
 * SQLite's online backup of `dbPath` into `copy`: a consistent copy even while the server writes. The
 * database is snapshotted first, so every archive it refers to is already on disk when archives are copied.
 */
async function snapshotDatabase(dbPath: string, copy: string, interrupts: Interrupts): Promise<void> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    // One read transaction for the whole copy: its snapshot stays as it is, so the copy goes in steps
    // (a signal is heard between two) and a concurrent writer cannot make it start again.
    db.exec('BEGIN');
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    await interrupts.caught((signal) =>
      db.backup(copy, {
        progress: ({ totalPages, remainingPages }) => {
          if (signal.aborted) throw new CopyInterrupted(signal.reason, totalPages - remainingPages, totalPages);
          return BACKUP_STEP_PAGES;
        },
      }),
    );
  } catch (error) {
    if (error instanceof CopyInterrupted) {
      const where = `${error.copied} of ${error.total} pages`;
      throw new CliError(
        `interrupted during the copy of ${dbPath} (${where}): no backup was made, and the partial copy is removed`,
        exitCodeForSignal(error.signal),
        'interrupted',
      );
    }
    throw new CliError(`backup of ${dbPath} failed: ${(error as Error).message}`, EXIT.failure, 'backup');
  } finally {
    db.close();
  }
}

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('backup <out>')
    .description('copy a consistent snapshot of a registry data dir (database, archives, secret), also while it serves')
    .addOption(dataDirOption('the data dir to back up'))
    .addOption(backendOption('database', 'the database `nodereg serve --database` uses, when not DIR/registry.db'))
    .addOption(
      backendOption(
        'storage',
        'the archives `nodereg serve --storage` uses, when not DIR/archives: a directory is copied into OUT/archives; an s3:// bucket keeps them and is not copied',
      ),
    )
    .action(async (outArg: string, flags: { dataDir?: string; database?: string; storage?: string }) => {
      const dataDir = flags.dataDir === undefined ? defaultDataDir(ctx.env) : userPath(flags.dataDir, '--data-dir');
      const out = userPath(outArg, 'OUT');
      const { dbPath, archivesDir, storageUrl } = await backupSources(ctx, flags, dataDir);
      if (!existsSync(dbPath))
        throw invalidInput(`no registry database in ${dataDir}`, 'point --data-dir at the dir `nodereg serve` uses');
      if (existsSync(out) && (!statSync(out).isDirectory() || readdirSync(out).length > 0)) {
        throw invalidInput(`${out} already exists and is not an empty dir`, 'name a new dir to back up into');
      }
      // Written into a temporary dir beside `out`, marked in progress, and renamed to `out` only once
      // whole: a backup cut short is never found at `out`, and `serve` refuses the temporary dir.
      makeUserDir(dirname(out), 'OUT');
      let work: string | undefined;
      let dbBytes = 0;
      const archives = { files: 0, bytes: 0 };
      let secrets: string[] = [];
      // On SIGINT or SIGTERM (a cron job's timeout) too, the partial copy goes, and it exits 130 or 143.
      await withCleanup(
        async (interrupts) => {
          work = mkdtempSync(join(dirname(out), `.${basename(out)}.partial-`));
          writeFileSync(join(work, BACKUP_IN_PROGRESS), `nodereg backup of ${dataDir} into ${out}, not finished\n`, {
            mode: 0o600,
          });
          await snapshotDatabase(dbPath, join(work, 'registry.db'), interrupts);
          chmodSync(join(work, 'registry.db'), 0o600); // as in the data dir: it holds token hashes and e-mails
          dbBytes = statSync(join(work, 'registry.db')).size;
          if (archivesDir !== undefined) {
            if (existsSync(archivesDir)) await copyArchives(archivesDir, join(work, 'archives'), archives);
            await refuseMissingArchives(join(work, 'registry.db'), join(work, 'archives'), archivesDir);
          }
          // The secret (signing keys derive from it) and the admin token, kept private.
          secrets = ['secret', 'admin-token'].filter((name) => existsSync(join(dataDir, name)));
          for (const name of secrets) copyFileSync(join(dataDir, name), join(work, name));
          const manifest = {
            from: dataDir,
            completed_at: new Date().toISOString(),
            database_bytes: dbBytes,
            archives,
            secrets,
          };
          writeFileSync(join(work, BACKUP_COMPLETE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
          unlinkSync(join(work, BACKUP_IN_PROGRESS));
          renameSync(work, out); // replaces an empty `out`
        },
        () => work && rmSync(work, { recursive: true, force: true }),
      );

      ctx.out.result(
        { out, database: { path: join(out, 'registry.db'), bytes: dbBytes }, archives, secrets },
        [
          `backed up ${dataDir} to ${out}:`,
          `  registry.db  ${formatSize(dbBytes)} (SQLite online backup)`,
          archivesDir === undefined
            ? `  archives/    not copied: they stay in ${storageUrl!.text} (keep the bucket, with versioning on)`
            : `  archives/    ${archives.files} file${archives.files === 1 ? '' : 's'}, ${formatSize(archives.bytes)}`,
          ...secrets.map((name) => `  ${name}`),
          `  ${BACKUP_COMPLETE}  (written last: the backup is whole)`,
          `restore: stop the server, then serve with --data-dir ${out}${archivesDir === undefined ? ` --storage ${storageUrl!.text}` : ''}`,
          `grow onto PostgreSQL and S3: nodereg restore ${out} --database postgres://… --storage s3://…`,
        ].join('\n'),
      );
    });
  examples(command, [
    'nodereg backup --data-dir ~/.local/share/nodereg ./registry-backup',
    'nodereg backup ./backup-$(date +%F)',
  ]);
}
