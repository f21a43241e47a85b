import { dirname } from 'node:path';
import { Option, type Command } from 'commander';
import { MAX_ARCHIVE_ENTRIES, NODE_STATUS, PAGE } from '../../contract/limits.js';
import { DEFAULT_MAX_UNPACKED } from '../../shared/tuning.js';
import { normalizeVersion } from '../../contract/version.js';
import { ApiError } from '../../client/errors.js';
import { fieldKey } from '../../shared/field-keys.js';
import type { Node, NodeVersion } from '../../contract/resources.js';
import { nodeWritable } from '../../contract/arguments.js';
import { formatSize } from '../../contract/size.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT, fileProblem, invalidInput, toCliError } from '../errors.js';
import { fields, fullStatus, listText, shortStatus, statusText, versionFindings, versionTable } from '../format.js';
import { outFile, refuseStdoutOut } from '../out-path.js';
import { relativeTime, table } from '../output.js';
import {
  checkNodeId,
  checkPublisherId,
  checkVersion,
  given,
  listOption,
  nodePublisher,
  precheck,
  textOption,
} from '../resolve.js';
import { makeUserDir } from '../make-dir.js';
import { examples } from '../examples.js';
import { saveArchive } from './node-download.js';
import { nodeVersions, notFoundHint, showNode } from './node-show.js';
import { registerList } from './node/list.js';
import { showVersion } from './node/show-version.js';
import { routes } from '../../client/routes.js';

/**
 * One flag per node field its members may write (src/contract/resources.ts, as the generated checks list
 * them, so that registering the flags loads no zod), except those holding an object: lists are
 * comma-separated, and an empty value clears a field.
 */
const UPDATE_FIELDS = nodeWritable.flatMap(({ field, type, description }) => {
  if (type !== 'string' && type !== 'array') return [];
  const list = type === 'array';
  const help = `${description}${list ? ', comma-separated (replaces the list)' : ''}`;
  return [{ field, list, option: new Option(`--${fieldKey(field)} <${list ? 'a,b' : 'text'}>`, help) }];
});

/** The incumbent client's `comfy node …` commands that publishers type, and ours that do their work. */
const INCUMBENT_NODE_COMMANDS = {
  publish: 'publish',
  validate: 'validate',
  pack: 'pack',
  init: 'init',
  scaffold: 'init',
};

type UpdateOptions = Record<string, string | undefined> & { publisher?: string; status?: string };

export function register(program: Command, ctx: Ctx): void {
  const node = examples(program.command('node').description('show, search, download and update nodes'), [
    'nodereg node search relight',
    'nodereg node list --mine',
    'nodereg node show my-node',
    'nodereg node update my-node --description "Relights portraits"',
  ]);
  registerIncumbentWords(node);
  registerUpdate(node, ctx);
  registerShow(node, ctx);
  registerVersions(node, ctx);
  registerSearch(node, ctx);
  registerList(node, ctx);
  registerDownload(node, ctx);
}

function registerIncumbentWords(node: Command): void {
  // The incumbent client's `comfy node publish|validate|pack|init|scaffold`, typed from habit: ours are top-level.
  for (const [word, ours] of Object.entries(INCUMBENT_NODE_COMMANDS)) {
    node
      .command(word, { hidden: true })
      .allowUnknownOption()
      .allowExcessArguments()
      .action(() => {
        throw invalidInput(
          `there is no \`nodereg node ${word}\`: ${ours} is a command of its own`,
          `run \`nodereg ${ours}\` with the same options (\`nodereg ${ours} --help\` lists them)`,
        );
      });
  }
}

function registerUpdate(node: Command, ctx: Ctx): void {
  const update = node
    .command('update <nodeId>')
    .description("update a node's metadata: only the fields given change; an empty value clears a field")
    .option('--publisher <id>', "the node's publisher (default: the node's own, else the one ./pyproject.toml names)");
  for (const { option } of UPDATE_FIELDS) update.addOption(option);
  examples(
    update
      .addOption(
        new Option('--status <status>', 'node status (banned: admins only)').choices(NODE_STATUS.map(shortStatus)),
      )
      .action(async (nodeId: string, o: UpdateOptions) => {
        await checkNodeId(nodeId);
        if (o.publisher) await checkPublisherId(o.publisher, '--publisher');
        const body = given({
          ...Object.fromEntries(
            UPDATE_FIELDS.map(({ field, list, option }) => [
              field,
              (list ? listOption : textOption)(o[option.attributeName()]),
            ]),
          ),
          status: o.status ? (fullStatus(NODE_STATUS, o.status) as (typeof NODE_STATUS)[number]) : undefined,
        });
        if (Object.keys(body).length === 0) {
          throw invalidInput(
            'nothing to update',
            `pass at least one field, e.g. nodereg node update ${nodeId} --description "..."`,
          );
        }
        const checked = await precheck(routes.updateNode, { body });
        const client = await ctx.client({ requireToken: true });
        const publisherId = await nodePublisher(client, nodeId, o.publisher);
        const updated = await client
          .call(routes.updateNode, { params: { publisherId, nodeId }, body: checked.body })
          .catch((error) => {
            throw toCliError(error, {
              404: `is ${nodeId} a node of publisher ${publisherId}? Check with \`nodereg node show ${nodeId}\``,
            });
          });
        ctx.out.result(updated, `updated node ${updated.id} of ${publisherId}: ${Object.keys(body).join(', ')}`);
      }),
    [
      'nodereg node update my-node --description "Relights portraits" --tags image,relight',
      'nodereg node update my-node --publisher acme --status deleted',
      'nodereg node update my-node --banner-url ""          # clears the banner',
    ],
  );
}

function registerShow(node: Command, ctx: Ctx): void {
  examples(
    node
      .command('show <nodeId>')
      .description(
        'show a node: metadata, latest version, rating, downloads and every version; <nodeId>@<version> shows that version',
      )
      .option('--classes', 'also list the node classes its latest version defines, as the registry read them')
      .action(async (spec: string, options: { classes?: boolean }) => {
        const at = spec.lastIndexOf('@');
        if (at > 0) return showVersion(ctx, await checkNodeId(spec.slice(0, at)), spec.slice(at + 1));
        return showNode(ctx, await checkNodeId(spec), options.classes);
      }),
    [
      'nodereg node show my-node',
      'nodereg node show my-node@1.0.0',
      'nodereg node show my-node --json | jq .versions',
      'nodereg node show my-node --classes',
    ],
  );
}

function registerVersions(node: Command, ctx: Ctx): void {
  examples(
    node
      .command('versions <nodeId>')
      .description('list every version of a node (newest first) with status, deprecation and status reason')
      .option(
        '--reasons',
        "also show the registry scan's findings under each version (for the node's publisher members and admins)",
      )
      .action(async (nodeId: string, options: { reasons?: boolean }) => {
        await checkNodeId(nodeId);
        const versions = await nodeVersions(await ctx.client(), nodeId, options.reasons);
        ctx.out.result(
          versions,
          () => versionTable(ctx.out, versions) + (options.reasons ? versionFindings(ctx.out, versions) : ''),
        );
      }),
    [
      'nodereg node versions my-node',
      'nodereg node versions my-node --json',
      'nodereg node versions my-node --reasons',
    ],
  );
}

function registerSearch(node: Command, ctx: Ctx): void {
  examples(
    node
      .command('search <query>')
      .description('search active nodes by id, name, description, author and tags')
      .option('--page <n>', `page, from ${PAGE.min}`)
      .option('--limit <n>', `nodes per page, ${PAGE.limitMin}–${PAGE.limitMax} (default ${PAGE.defaultLimit})`)
      .action(async (q: string, o: { page?: string; limit?: string }) => {
        const query = { q, page: o.page, limit: o.limit };
        const checked = await precheck(routes.searchNodes, { query }, { q: '<query>' });
        const list = await (await ctx.client()).call(routes.searchNodes, checked).catch((error) => {
          throw toCliError(error);
        });
        ctx.out.result(list, () => {
          if (list.nodes.length === 0)
            return list.total ? `no nodes on page ${list.page} (${list.total} in all)` : `no nodes match "${q}"`;
          const rows = list.nodes.map((n) => [
            n.id,
            n.name ?? '',
            n.latest_version?.version ?? '-',
            String(n.downloads ?? 0),
            n.rating ? n.rating.toFixed(1) : '-',
            n.publisher?.id ?? '',
          ]);
          return `${table(rows, ['ID', 'NAME', 'LATEST', 'DOWNLOADS', 'RATING', 'PUBLISHER'])}\n\npage ${list.page} of ${list.totalPages} · ${list.total} node${list.total === 1 ? '' : 's'}`;
        });
      }),
    ['nodereg node search relight', 'nodereg node search "image tools" --page 2 --limit 50'],
  );
}

function registerDownload(node: Command, ctx: Ctx): void {
  examples(
    node
      .command('download <node>')
      .description(
        'download a version (latest active unless given as <nodeId>@<version>), check it is a readable zip and its SHA-256',
      )
      .option(
        '--out <file>',
        'where to write the archive; a directory (or a path ending in /, made if missing) gets <nodeId>-<version>.zip in it (default: ./<nodeId>-<version>.zip)',
      )
      .action(async (spec: string, o: { out?: string }) => {
        const at = spec.lastIndexOf('@');
        const nodeId = at > 0 ? spec.slice(0, at) : spec;
        const version = at > 0 ? await checkVersion(spec.slice(at + 1), '@<version>') : undefined;
        await checkNodeId(nodeId, '<nodeId>');
        if (o.out === '') throw invalidInput('--out must name a file');
        refuseStdoutOut(o.out);
        const client = await ctx.client();
        // The hint is asked for only when it is shown (a registry's 404), and not at all for a version already read.
        const notFound = async (error: unknown, named?: NodeVersion) =>
          toCliError(
            error,
            error instanceof ApiError && error.status === 404
              ? { 404: await downloadNotFoundHint(client, nodeId, version, named) }
              : {},
          );
        let found: NodeVersion;
        let notActive: unknown; // install's 404 for the version asked, downloaded as a member instead
        try {
          found = await client.call(routes.installNode, { params: { nodeId }, query: { version } });
        } catch (error) {
          // install gives Active versions only; the archive route also serves the others to the
          // publisher's members and admins, with their token: a version asked by name is tried there.
          const named =
            version && client.hasToken && error instanceof ApiError && error.status === 404
              ? await client.call(routes.getNodeVersion, { params: { nodeId, version } }).catch(() => undefined)
              : undefined;
          if (!named?.downloadUrl) throw await notFound(error, named);
          found = named;
          notActive = error;
        }
        if (!found.downloadUrl)
          throw new CliError(
            `the registry gave no download URL for ${nodeId} ${found.version}`,
            EXIT.failure,
            'internal',
          );
        // The file is named after the version answered: one that is not a version (`../../x`) would name a path elsewhere.
        if (!normalizeVersion(String(found.version)))
          throw new CliError(
            `the registry answered a version that is not one: "${found.version}"`,
            EXIT.failure,
            'bad_answer',
            'check the registry URL',
          );
        const name = `${nodeId}-${found.version}.zip`;
        const file = outFile(o.out, name);
        const saved = await saveArchive(client, found, file).catch(async (error) => {
          // Not a member after all: the archive route hid the version, as install did.
          if (notActive !== undefined && error instanceof CliError && error.status === 404)
            throw await notFound(notActive, found);
          throw error;
        });
        if (notActive !== undefined)
          ctx.out.warn(
            `${nodeId} ${found.version} is not active (${found.status ?? 'status unknown'}): downloaded with your token, as a member of its publisher or an admin`,
          );
        const summary = {
          node_id: found.node_id ?? nodeId,
          version: found.version,
          file: saved.file,
          size: saved.size,
          archive_sha256: saved.sha256,
          entries: saved.entries,
          download_url: found.downloadUrl,
        };
        ctx.out.result(
          summary,
          `downloaded ${summary.node_id} ${summary.version} to ${file} (${formatSize(saved.size)}, ${saved.entries} entr${saved.entries === 1 ? 'y' : 'ies'}, sha256 ${saved.sha256.slice(0, 12)}…${found.archive_sha256 ? ' verified' : ''})`,
        );
      }),
    ['nodereg node download my-node', 'nodereg node download my-node@1.2.0 --out vendor/my-node.zip'],
  );
}

/**
 * The hint for a download answered 404: an unknown node is searched for; a node that exists but has
 * no version to download (none Active yet: its archive never arrived, or it awaits review) has its
 * versions listed, with their status. `named`: the version asked for, read already (so both exist).
 */
async function downloadNotFoundHint(
  client: Awaited<ReturnType<Ctx['client']>>,
  nodeId: string,
  version: string | undefined,
  named?: NodeVersion,
): Promise<string> {
  const exists =
    named !== undefined ||
    (await client.call(routes.getNode, { params: { nodeId } }).then(
      () => true,
      () => false,
    ));
  if (!exists) return notFoundHint(nodeId);
  if (version && !named) {
    const wanted = normalizeVersion(version)?.version;
    const versions = await nodeVersions(client, nodeId).catch(() => undefined);
    if (versions && !versions.some((v) => v.version === wanted))
      return `${nodeId} has no version ${version}: list its versions with \`nodereg node versions ${nodeId}\``;
  }
  const what = version ? `version ${version} is not active` : 'it has no active version yet';
  return `${what}: a version is active once its archive is uploaded (and approved, where the registry reviews by hand); see each version's status with \`nodereg node versions ${nodeId}\``;
}
