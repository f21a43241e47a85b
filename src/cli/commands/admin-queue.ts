// `nodereg admin queue`: the Flagged versions, oldest first, with their findings and whether their
// publisher asked for a re-review (DESIGN.md §14).
import type { Command } from 'commander';
import { routes } from '../../client/routes.js';
import type { QueuedVersion } from '../../contract/review-flow.js';
import { readStatusReason } from '../../contract/review-history.js';
import type { Ctx } from '../context.js';
import { toCliError } from '../errors.js';
import { examples } from '../examples.js';
import { table } from '../output.js';

function describe(version: QueuedVersion): string {
  const reason = readStatusReason(version.status_reason);
  const head = `${version.node_id}@${version.version}  by ${version.publisher_id}, ${String(version.createdAt ?? '').slice(0, 10)}${version.review_requested ? '  re-review requested' : ''}`;
  const said = reason ? `  latest: ${reason.message} (${reason.by})` : `  ${version.status_reason ?? ''}`;
  const findings = ((version.findings ?? []) as { file: string; line: number; rule: string; severity: string }[]).map(
    (f) => ['   ', `${f.file}:${f.line}`, f.rule, f.severity],
  );
  return [head, said, findings.length ? table(findings) : '    no findings'].join('\n');
}

export function registerQueue(admin: Command, ctx: Ctx): void {
  examples(
    admin
      .command('queue')
      .description('list Flagged versions, oldest first, with their findings and open re-review requests (admins)')
      .action(async () => {
        const client = await ctx.client({ requireToken: true });
        const queue = await client.call(routes.reviewQueue, {}).catch((error) => {
          throw toCliError(error, { 403: 'the review queue takes an admin token' });
        });
        ctx.out.result(queue, () =>
          queue.versions.length ? queue.versions.map(describe).join('\n\n') : 'no Flagged versions',
        );
      }),
    ['nodereg admin queue', 'nodereg admin queue --json | jq ".versions[].node_id"'],
  );
}
