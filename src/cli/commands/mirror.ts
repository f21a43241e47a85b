// `nodereg mirror sync|status`: prefetch nodes into a registry that mirrors an upstream (serve
// --upstream), for an air-gapped copy, and read the state of its cache. The CLI talks to the mirror
// over HTTP; the server fetches, verifies and pins (src/server/mirror/). A sync run again skips what is
// already kept and pinned, so an interrupted one resumes where it stopped.
import type { Command } from 'commander';
import { ApiError } from '../../client/errors.js';
import { routes } from '../../client/routes.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT, invalidInput, toCliError } from '../errors.js';
import { examples } from '../examples.js';
import { formatSize } from '../../contract/size.js';
import { resolveDeps, type WorkflowDeps } from '../workflow/deps.js';
import { readWorkflowTypes } from '../workflow/read-file.js';

interface SyncFlags {
  node?: string[];
  fromWorkflow?: string;
  publisher?: string;
  all?: boolean;
  versions: 'latest' | 'all';
  strict?: boolean;
  concurrency: string;
}

type Client = Awaited<ReturnType<Ctx['client']>>;
type Synced = Awaited<ReturnType<typeof syncOne>>;

async function syncOne(client: Client, nodeId: string, versions: SyncFlags['versions']) {
  try {
    return await client.call(routes.syncMirroredNode, { params: { nodeId }, body: { versions } });
  } catch (error) {
    if (!(error instanceof ApiError)) throw toCliError(error);
    return { id: nodeId, versions: [{ version: '*', outcome: 'failed' as const, reason: error.message }] };
  }
}

/** The packs a workflow needs, through the mirror's node-class routes. */
async function workflowPacks(client: Client, file: string): Promise<WorkflowDeps> {
  const types = readWorkflowTypes(file);
  return resolveDeps(types, async (comfyNodeName) => {
    try {
      return (await client.call(routes.getComfyNodeNode, { params: { comfyNodeName } })).id;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw toCliError(error);
    }
  });
}

/** The most pages of upstream's list a sync reads: a bound against an upstream that never says "last page". */
const UPSTREAM_PAGES_MAX = 10_000;

/** Every upstream node id, or one upstream publisher's, page by page through the mirror. */
async function upstreamIds(client: Client, publisher: string | undefined): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; page <= UPSTREAM_PAGES_MAX; page++) {
    const answer = await client
      .call(routes.listUpstreamNodes, {
        query: { page: String(page), limit: '100', ...(publisher ? { publisher } : {}) },
      })
      .catch((error) => {
        throw toCliError(error);
      });
    ids.push(...answer.nodes.map((node) => node.id));
    if (!answer.more) break;
  }
  return ids;
}

/** Runs `work` over `items`, at most `limit` at a time, in order of the items. */
async function bounded<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>, done: () => void): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at]!);
      done();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function syncText(synced: Synced[], deps: WorkflowDeps | undefined): string {
  const lines = synced.flatMap((node) =>
    node.versions.map(
      (v) =>
        `${v.outcome.padEnd(9)} ${node.id} ${v.version}${v.size !== undefined ? ` (${formatSize(v.size)})` : ''}${v.reason ? `: ${v.reason}` : ''}`,
    ),
  );
  if (deps?.unknown.length) lines.push(`classes no pack defines: ${deps.unknown.join(', ')}`);
  return lines.join('\n') || 'nothing to sync';
}

async function runSync(ctx: Ctx, flags: SyncFlags): Promise<void> {
  const concurrency = Number(flags.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
    throw invalidInput(`--concurrency must be a whole number from 1 to 64 (got "${flags.concurrency}")`);
  if (!flags.node?.length && !flags.fromWorkflow && !flags.publisher && !flags.all)
    throw invalidInput(
      'say what to sync: --node ID…, --from-workflow FILE, --publisher ID or --all',
      'nodereg mirror sync --node my-pack',
    );
  if (flags.all && flags.publisher)
    throw invalidInput('--all syncs every upstream node: leave out --publisher, or --all', 'nodereg mirror sync --all');
  const client = await ctx.client({ requireToken: true });
  const deps = flags.fromWorkflow ? await workflowPacks(client, flags.fromWorkflow) : undefined;
  const listed = flags.all || flags.publisher ? await upstreamIds(client, flags.publisher) : [];
  const ids = [...new Set([...(flags.node ?? []), ...(deps?.packs.map((pack) => pack.id) ?? []), ...listed])];
  const progress = ctx.out.progress();
  let finished = 0;
  const synced = await bounded(
    ids,
    concurrency,
    (id) => syncOne(client, id, flags.versions),
    () => progress.update(`synced ${++finished}/${ids.length} nodes`),
  );
  progress.end();
  ctx.out.result({ nodes: synced, unknown: deps?.unknown ?? [], core: deps?.core ?? [] }, () => syncText(synced, deps));
  const failed = synced.some((node) => node.versions.some((v) => v.outcome === 'failed'));
  if (failed)
    throw new CliError(
      'some versions could not be synced (see above); run the sync again to resume',
      EXIT.failure,
      'sync_failed',
    );
  if (flags.strict && deps?.unknown.length)
    throw new CliError(`--strict: no pack defines ${deps.unknown.join(', ')}`, EXIT.failure, 'unknown_classes');
}

async function runStatus(ctx: Ctx): Promise<void> {
  const client = await ctx.client({ requireToken: true });
  const status = await client.call(routes.getMirrorStatus, {}).catch((error) => {
    throw toCliError(error);
  });
  ctx.out.result(status, () =>
    [
      `upstream ${status.upstream}: ${status.nodes.length} nodes, ${status.archives} archives, ${formatSize(status.bytes)}`,
      ...status.nodes.map(
        (node) =>
          `${node.id}  refreshed ${node.fetched_at}  ${node.archives} archives (${node.pinned} pinned), ${formatSize(node.bytes)}${node.refused ? `, ${node.refused} refused` : ''}${node.failure ? `  last failure ${node.failure}` : ''}`,
      ),
    ].join('\n'),
  );
}

export function register(program: Command, ctx: Ctx): void {
  const mirror = examples(
    program.command('mirror').description('prefetch and inspect the cache of a registry that mirrors an upstream'),
    ['nodereg mirror sync --from-workflow my-workflow.json', 'nodereg mirror status'],
  );
  const sync = mirror
    .command('sync')
    .description(
      "fetch, verify and pin nodes' archives into the mirror (admins), as its policy lets through; run again to resume",
    )
    .option('--node <id...>', 'node ids to sync')
    .option('--from-workflow <file>', "the packs a workflow's node classes need (resolved through the mirror)")
    .option('--publisher <id>', "every node of this upstream publisher (upstream's list, page by page)")
    .option('--all', "every upstream node (upstream's list, page by page)")
    .option('--versions <which>', 'latest or all active versions', 'latest')
    .option('--strict', 'fail when a class of the workflow is defined by no pack')
    .option('--concurrency <n>', 'nodes synced at once', '4')
    .action((flags: SyncFlags) => {
      if (flags.versions !== 'latest' && flags.versions !== 'all')
        throw invalidInput(`--versions must be latest or all (got "${flags.versions}")`);
      return runSync(ctx, flags);
    });
  examples(sync, [
    'nodereg mirror sync --node my-pack other-pack --versions all',
    'nodereg mirror sync --from-workflow flow.json --strict --json',
    'nodereg mirror sync --publisher comfy-org --versions all',
  ]);
  examples(
    mirror
      .command('status')
      .description('the nodes kept from upstream: archives, bytes, last refresh, failures (admins)')
      .action(() => runStatus(ctx)),
    ['nodereg mirror status', 'nodereg mirror status --json'],
  );
}
