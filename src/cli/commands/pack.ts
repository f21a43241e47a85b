import { renameSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_MAX_ARCHIVE } from '../../shared/tuning.js';
import { formatSize } from '../../contract/size.js';
import type { Ctx } from '../context.js';
import { onNodes } from '../many-nodes.js';
import { allOption, type ManyFlags } from '../project-discovery.js';
import { isDirectory, outFile, refuseStdoutOut } from '../out-path.js';
import { table } from '../output.js';
import { buildArchive, fileTable, listFiles, loadChecked, parseMaxSize, withCleanup } from '../project.js';
import { makeUserDir, userPath } from '../make-dir.js';
import { examples } from '../examples.js';

interface Options {
  out?: string;
  list?: boolean;
  maxSize?: string;
}

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('pack [dirs...]')
    .description(
      'build the archive that publish would upload: a deterministic zip, written to <id>-<version>.zip in the current directory',
    )
    .option(
      '--out <file>',
      'where to write the archive; a directory (or a path ending in /, made if missing) gets <id>-<version>.zip in it',
    )
    .option('--list', 'print the files in the archive (in a git work tree, those not committed are marked untracked)')
    .option(
      '--max-size <size>',
      `fail when the archive is larger (default ${formatSize(DEFAULT_MAX_ARCHIVE)}); bytes or units: 500kB, 1GiB`,
    )
    .addOption(allOption())
    .action((dirs: string[], options: Options & ManyFlags) =>
      onNodes(
        ctx,
        dirs,
        options.all,
        (node, dir) => packOne(node, dir, options),
        // a directory (or a path ending in /) takes each node's <id>-<version>.zip
        options.out && !/[\\/]$/.test(options.out) && !isDirectory(options.out) ? '--out FILE' : undefined,
      ),
    );
  examples(command, [
    'nodereg pack',
    'nodereg pack ./my-node --out dist/node.zip --list',
    'nodereg pack --max-size 50MiB --json',
  ]);
}

/** `nodereg pack [dir]`, of one node. */
async function packOne(ctx: Ctx, dir: string | undefined, options: Options): Promise<void> {
  const maxSize = parseMaxSize(options.maxSize, DEFAULT_MAX_ARCHIVE);
  refuseStdoutOut(options.out);
  const given = options.out ? userPath(options.out, '--out') : undefined;
  // Once the listing has found enough to pack, the packer's workers start and deflate files while it goes on.
  const pool = (await import('../../package/zip.js')).startPool();
  const project = await loadChecked(ctx, dir, {
    requirePublisher: false,
    skip: given ? [given] : [],
    onFile: pool?.offer,
  }).catch(async (error) => {
    await pool?.stop();
    throw error;
  });
  const { request } = project;
  const out = resolve(outFile(options.out || undefined, `${request.nodeId}-${request.version}.zip`));
  // The output never goes into its own archive, wherever it is.
  project.files = project.files.filter((f) => resolve(f.abs) !== out);

  // Written beside the target and renamed, so a failed pack leaves no half archive behind.
  makeUserDir(dirname(out), '--out');
  const partial = `${out}.partial-${process.pid}`;
  const archive = await withCleanup(
    async () => {
      const built = await buildArchive(ctx, project, partial, maxSize, pool);
      renameSync(partial, out);
      return built;
    },
    () => rmSync(partial, { force: true }),
  );

  const fileList = listFiles(project);
  ctx.out.result(
    {
      path: out,
      node_id: request.nodeId,
      version: request.version,
      files: archive.files,
      unpacked_size: archive.unpackedSize,
      archive_size: archive.size,
      archive_sha256: archive.sha256,
      ...(options.list ? { file_list: fileList } : {}),
    },
    () => {
      const list = options.list ? `${fileTable(fileList)}\n\n` : '';
      return (
        `${list}${request.nodeId} ${request.version} → ${out}\n` +
        table([
          ['files', String(archive.files)],
          ['unpacked', formatSize(archive.unpackedSize)],
          ['archive', `${formatSize(archive.size)} (${archive.size} bytes)`],
          ['sha256', archive.sha256],
        ])
      );
    },
  );
}
