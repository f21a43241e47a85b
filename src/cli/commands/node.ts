import { Option, type Command } from 'commander';
import { NODE_STATUS, PAGE } from '../../contract/limits.js';
import { fieldKey } from '../../shared/field-keys.js';
import { nodeWritable } from '../../contract/arguments.js';
import type { Ctx } from '../context.js';
import { invalidInput, toCliError } from '../errors.js';
import { fullStatus, shortStatus, versionFindings, versionTable } from '../format.js';
import { table } from '../output.js';
import { checkNodeId, checkPublisherId, given, listOption, nodePublisher, precheck, textOption } from '../resolve.js';
import { examples } from '../examples.js';
import { nodeVersions, showNode } from './node-show.js';
import { registerList } from './node/list.js';
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
        if (at > 0) {
          const nodeId = await checkNodeId(spec.slice(0, at));
          return (await import('./node/show-version.js')).showVersion(ctx, nodeId, spec.slice(at + 1));
        }
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
      .action(async (spec: string, o: { out?: string }) =>
        (await import('./node/download.js')).downloadNode(ctx, spec, o),
      ),
    ['nodereg node download my-node', 'nodereg node download my-node@1.2.0 --out vendor/my-node.zip'],
  );
}
