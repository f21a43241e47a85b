// `nodereg admin gc`: removes the archives of versions deleted longer than the grace period, and
// objects at an archive key no version refers to (DESIGN.md §16); `--dry-run` lists them only.
import type { Command } from 'commander';
import { routes } from '../../client/routes.js';
import type { GcAnswer } from '../../contract/admin.js';
import type { Ctx } from '../context.js';
import { parseDuration } from '../duration.js';
import { invalidInput, toCliError } from '../errors.js';
import { GC_GRACE_MAX_SECONDS } from '../../contract/limits.js';
import { examples } from '../examples.js';

function describe(answer: GcAnswer): string {
  const verb = answer.dry_run ? 'would remove' : 'removed';
  const lines = [
    ...answer.deleted_versions.map((v) => `${verb} ${v.key}  (${v.node_id} ${v.version}, deleted)`),
    ...answer.orphans.map((o) => `${verb} ${o.key}  (orphaned, ${o.size} bytes, stored ${o.modified_at})`),
  ];
  const total = `${answer.deleted_versions.length} deleted versions' archives and ${answer.orphans.length} orphaned objects older than ${answer.before}`;
  return [
    ...lines,
    `${answer.dry_run ? 'would remove' : 'removed'} ${total}${answer.dry_run ? ' (dry run: nothing removed)' : ''}`,
  ].join('\n');
}

export function registerGc(admin: Command, ctx: Ctx): void {
  examples(
    admin
      .command('gc')
      .description(
        'remove the archives of versions deleted longer than the grace period, and orphaned archive objects (no version refers to them) older than it (admins)',
      )
      .option('--dry-run', 'list what would be removed, and remove nothing')
      .option(
        '--grace <duration>',
        'keep what was deleted (or stored, for an orphan) less than this long ago: 7d, 12h, 30m',
        '7d',
      )
      .action(async (opts: { dryRun?: boolean; grace: string }) => {
        const graceSeconds = Math.floor(parseDuration(opts.grace, '--grace') / 1000);
        if (graceSeconds > GC_GRACE_MAX_SECONDS)
          throw invalidInput(
            `--grace ${opts.grace} is longer than gc takes (100 years)`,
            'write a shorter one, like 30d',
          );
        const client = await ctx.client({ requireToken: true });
        const answer = await client
          .call(routes.collectArchives, { body: { grace_seconds: graceSeconds, dry_run: opts.dryRun === true } })
          .catch((error) => {
            throw toCliError(error, { 403: 'gc takes an admin token (`nodereg whoami` shows whether yours is one)' });
          });
        ctx.out.result(answer, () => describe(answer));
      }),
    ['nodereg admin gc --dry-run', 'nodereg admin gc --grace 30d', 'nodereg admin gc --json | jq ".orphans[].key"'],
  );
}
