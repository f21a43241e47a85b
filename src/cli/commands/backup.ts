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
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { formatSize } from '../../contract/size.js';
import type { StorageTarget } from '../../server/backends.js';
import type { CopyTotals, StoredFiles } from '../../server/backup-files.js';
import {
  BACKUP_COMPLETE,
  BACKUP_IN_PROGRESS,
  readStorageRecord,
  STORAGE_RECORD,
  type StorageRecord,
} from '../../server/data-dir.js';
import { backendOption, backendUrl, type BackendUrl, withBackend } from '../backend-urls.js';
import type { Ctx } from '../context.js';
import { dataDirOption, defaultDataDir } from '../data-dir.js';
import { CliError, EXIT, exitCodeForSignal, invalidInput } from '../errors.js';
import { makeUserDir, userPath } from '../make-dir.js';
import { withCleanup, type Interrupts } from '../project.js';
import { examples } from '../examples.js';
import { shellWord } from '../invocation.js';

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

/** Where serve keeps the registry: its SQLite file, and its archive storage. */
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
  return { dbPath, storage: await archiveSource(ctx, flags, dataDir) };
}

/** The same storage, as --storage names it (a dir resolved, s3://bucket/prefix without a trailing slash). */
const sameStorage = (a: StorageTarget, b: StorageTarget) =>
  a.kind === 'local'
    ? b.kind === 'local' && a.dir === b.dir
    : b.kind === 's3' && a.bucket === b.bucket && a.prefix === b.prefix;

/**
 * Where the archives are: where serve recorded them at its last start (DIR/storage.json), else
 * --storage or NODEREG_STORAGE_URL, else DIR/archives. A flag or variable naming another storage than
 * the record is refused: a backup from the wrong place would be a backup of no archives.
 */
async function archiveSource(ctx: Ctx, flags: { storage?: string }, dataDir: string) {
  const backends = await import('../../server/backends.js');
  const given = backendUrl(ctx.env, flags, 'storage');
  let recorded: StorageRecord | undefined;
  try {
    recorded = readStorageRecord(dataDir);
  } catch (error) {
    throw invalidInput(
      (error as Error).message,
      `start \`nodereg serve --data-dir ${shellWord(dataDir)}\` once: it writes it again`,
    );
  }
  const url: BackendUrl = given ??
    (recorded && { text: recorded.archives, name: join(dataDir, STORAGE_RECORD) }) ?? {
      text: join(dataDir, 'archives'),
      name: 'the data dir',
    };
  const target = (await withBackend(url, backends.parseStorageUrl))!;
  if (given && recorded && !sameStorage(target, backends.parseStorageUrl(recorded.archives))) {
    throw invalidInput(
      `${given.name} names ${given.text}, but the server of ${dataDir} keeps its archives in ${recorded.archives} (${STORAGE_RECORD}, written at its last start): no backup was made`,
      given.name === '--storage'
        ? 'leave --storage out: backup reads the storage from the data dir'
        : `unset ${given.name} for the backup (env -u ${given.name} nodereg backup …): backup reads the storage from the data dir`,
    );
  }
  return { url, target };
}

/** Reads the files of `target` by key; a local dir is only read (never made, nor swept). */
async function openStoredFiles(ctx: Ctx, url: BackendUrl, target: StorageTarget) {
  if (target.kind === 'local') {
    const { openFile } = await import('../../server/archives/storage.js');
    const files: StoredFiles = {
      location: target.dir,
      open: (key) => openFile(join(target.dir, ...key.split('/'))),
    };
    return { files, close: () => {} };
  }
  const backends = await import('../../server/backends.js');
  const storage = (await withBackend(url, () => backends.openStorageTarget(target, ctx.env)))!;
  return { files: storage as StoredFiles, close: () => storage.close?.() };
}

/** Copies the archives the snapshot names from their storage into `to`; a refusal is exit 2, naming what to fix. */
async function copyArchives(
  ctx: Ctx,
  snapshot: string,
  source: Awaited<ReturnType<typeof archiveSource>>,
  to: string,
  totals: CopyTotals,
): Promise<void> {
  const { default: Database } = await import('better-sqlite3');
  const { copyStoredFiles, BackupRefused } = await import('../../server/backup-files.js');
  const { files, close } = await openStoredFiles(ctx, source.url, source.target);
  // Read-write, though it only reads: closing it then removes the -wal and -shm files a WAL database gets.
  const db = new Database(snapshot, { fileMustExist: true });
  try {
    await copyStoredFiles(db, files, to, totals);
  } catch (error) {
    if (error instanceof BackupRefused) throw new CliError(error.message, EXIT.invalid, 'backup_archives', error.hint);
    throw new CliError(
      `copying the archives from ${files.location} failed: ${(error as Error).message}; no backup was made`,
      EXIT.failure,
      'backup_archives',
    );
  } finally {
    db.close();
    await close();
  }
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
        'the archives `nodereg serve --storage` uses (by default the one serve recorded in DIR/storage.json at its last start, else DIR/archives): a directory or s3:// bucket, copied into OUT/archives; another storage than the recorded one is refused',
      ),
    )
    .action(async (outArg: string, flags: { dataDir?: string; database?: string; storage?: string }) => {
      const dataDir = flags.dataDir === undefined ? defaultDataDir(ctx.env) : userPath(flags.dataDir, '--data-dir');
      const out = userPath(outArg, 'OUT');
      const { dbPath, storage } = await backupSources(ctx, flags, dataDir);
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
          await copyArchives(ctx, join(work, 'registry.db'), storage, join(work, 'archives'), archives);
          // The secret (signing keys derive from it) and the admin token, kept private.
          secrets = ['secret', 'admin-token'].filter((name) => existsSync(join(dataDir, name)));
          for (const name of secrets) copyFileSync(join(dataDir, name), join(work, name));
          const manifest = {
            from: dataDir,
            completed_at: new Date().toISOString(),
            database_bytes: dbBytes,
            archives: { ...archives, from: storage.url.text },
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
          `  archives/    ${archives.files} file${archives.files === 1 ? '' : 's'}, ${formatSize(archives.bytes)}, from ${storage.url.text}, each SHA-256 checked`,
          ...secrets.map((name) => `  ${name}`),
          `  ${BACKUP_COMPLETE}  (written last: the backup is whole)`,
          `restore: stop the server, then serve with --data-dir ${out}`,
          `grow onto PostgreSQL and S3: nodereg restore ${out} --database postgres://… --storage s3://…`,
        ].join('\n'),
      );
    });
  examples(command, [
    'nodereg backup --data-dir ~/.local/share/nodereg ./registry-backup',
    'nodereg backup ./backup-$(date +%F)',
  ]);
}
