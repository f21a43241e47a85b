// `nodereg publish dirA dirB …` and `publish --all`: every node is checked, scanned and packed before
// any is sent; then they are published in order, each by the one-node publish (run.ts), and one
// summary (or one JSON array) says what became of each.
import { appendFileSync } from 'node:fs';
import type { Ctx } from '../context.js';
import { CliError, EXIT, exitCodeForSignal } from '../errors.js';
import { type NodeResult, nodeCtx, nodeError, resultsArray } from '../many-nodes.js';
import { table } from '../output.js';
import { statusWord } from '../project.js';
import type { PublishOptions } from './options.js';
import { publishProject } from './run.js';

/** A node waiting, packed, for its turn to be sent. */
interface Waiting {
  dir: string;
  done: Promise<void>;
  go: () => void;
  drop: (reason: Error) => void;
}

/** Why a node packed but not sent ends: another node failed first. */
const dropped = () => new CliError('not published: another node failed first', EXIT.failure, 'cancelled');

/** A node packed and waiting when a signal came: nothing of it was sent, and its archive is removed. */
const interrupted = (dir: string, signal: NodeJS.Signals) =>
  new CliError(
    `interrupted: nothing of ${dir} was sent (it was packed, waiting for its turn; the archive is removed)`,
    exitCodeForSignal(signal),
    'interrupted',
  );

/** Starts the publish of the node in `dir` and waits until it is packed (or has failed, or a dry run is done). */
async function prepare(ctx: Ctx, dir: string, options: PublishOptions, results: NodeResult[]) {
  let packed!: () => void;
  const reached = new Promise<void>((resolve) => {
    packed = resolve;
  });
  let go!: () => void;
  let drop!: (reason: Error) => void;
  const turn = new Promise<void>((resolve, reject) => {
    go = resolve;
    drop = reject;
  });
  // A dry run ends without awaiting its turn: dropping it then must not be an unhandled rejection.
  turn.catch(() => {});
  const done = publishProject(nodeCtx(ctx, dir, results), dir, options, (signal) => {
    packed();
    signal.addEventListener('abort', () => drop(interrupted(dir, signal.reason)), { once: true });
    return turn;
  });
  const failure = await Promise.race([
    reached.then(() => undefined),
    done.then(
      () => undefined,
      (error) => error,
    ),
  ]);
  return { waiting: { dir, done, go, drop } satisfies Waiting, failure: failure as unknown };
}

/** Drops every node still waiting, and waits for each to remove its archive. */
async function dropAll(waiting: Waiting[]): Promise<void> {
  for (const w of waiting) w.drop(dropped());
  await Promise.allSettled(waiting.map((w) => w.done));
}

/** `nodereg publish` of several directories. */
export async function publishMany(ctx: Ctx, dirs: string[], options: PublishOptions): Promise<void> {
  const results: NodeResult[] = [];
  const waiting: Waiting[] = [];
  for (const dir of dirs) {
    if (!ctx.out.json) ctx.out.info(`── ${dir}: checking, scanning and packing`);
    const { waiting: node, failure } = await prepare(ctx, dir, options, results);
    if (failure) {
      await dropAll(waiting);
      throw nodeError(failure, dir, `nothing was published: every node is checked, scanned and packed first`);
    }
    waiting.push(node);
  }
  for (const [i, node] of waiting.entries()) {
    if (!ctx.out.json) ctx.out.info(`── ${node.dir}: publishing`);
    node.go();
    try {
      await node.done;
    } catch (error) {
      await dropAll(waiting.slice(i + 1));
      // a later step of the job (`if: failure()`) still reads which nodes were published
      writeGithubOutput(ctx, results);
      throw nodeError(error, node.dir, stoppedText(results, waiting.slice(i + 1)));
    }
  }
  writeGithubOutput(ctx, results);
  ctx.out.result(resultsArray(results), () => summary(results, options.dryRun));
}

/** What a failure leaves: the nodes published before it, and those not tried. */
function stoppedText(results: NodeResult[], rest: Waiting[]): string {
  const done = results.map(({ value }) => `${value.node_id} ${value.version}${value.skipped ? ' (skipped)' : ''}`);
  const published = done.length ? `already published: ${done.join(', ')}` : 'no node was published before it';
  const untried = rest.length ? `; not tried: ${rest.map((w) => w.dir).join(', ')}` : '';
  return `${published}${untried}; once it is fixed, the same command with --skip-existing publishes the rest`;
}

function summary(results: NodeResult[], dryRun?: boolean): string {
  if (dryRun) return `dry run of ${results.length} nodes: nothing was sent`;
  const rows = results.map(({ dir, value }) => [
    String(value.node_id),
    String(value.version),
    value.skipped ? 'skipped' : 'published',
    statusWord(String(value.status)),
    dir,
  ]);
  return `\n${table(rows, ['NODE', 'VERSION', 'RESULT', 'STATUS', 'DIR'])}`;
}

/**
 * One line per node in GITHUB_OUTPUT: `<node id>=` a JSON object of what the one-node publish writes
 * (version, download_url, archive_sha256, skipped), read in a workflow with fromJSON.
 */
function writeGithubOutput(ctx: Ctx, results: NodeResult[]): void {
  const file = ctx.env.GITHUB_OUTPUT;
  if (!file || !results.length) return;
  const lines = results.map(({ value: v }) => {
    const fields = {
      version: v.version,
      download_url: v.download_url,
      archive_sha256: v.archive_sha256,
      skipped: v.skipped,
    };
    return `${v.node_id}=${JSON.stringify(fields)}\n`;
  });
  try {
    appendFileSync(file, lines.join(''));
  } catch (error) {
    throw new CliError(
      `${results.length} nodes are published, but GITHUB_OUTPUT (${file}) cannot be written: ${(error as Error).message}`,
      EXIT.failure,
      'github_output',
      'set GITHUB_OUTPUT to a writable file or unset it, then run the same publish with --skip-existing',
    );
  }
}
