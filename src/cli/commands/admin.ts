// `nodereg admin`: the admins' commands against a running registry: the review of Flagged versions
// (DESIGN.md §14), an upload's dead claim, the archives' gc and the audit log; one file per verb.
import type { Command } from 'commander';
import type { Ctx } from '../context.js';
import { examples } from '../examples.js';
import { registerDecide } from './admin-decide.js';
import { registerGc } from './admin-gc.js';
import { registerQueue } from './admin-queue.js';
import { registerReleaseClaim } from './admin-release-claim.js';
import { registerAudit } from './admin-audit.js';

export function register(program: Command, ctx: Ctx): void {
  const admin = examples(
    program
      .command('admin')
      .description(
        'operate a registry: review Flagged versions, release claims, collect archives, read the audit log (admins only)',
      ),
    [
      'nodereg admin queue',
      'nodereg admin decide my-node 1.2.0 --decision approve --message "reviewed"',
      'nodereg admin release-claim my-node 1.2.0',
      'nodereg admin gc --dry-run',
      'nodereg admin audit --action user.disable',
    ],
  );
  registerQueue(admin, ctx);
  registerDecide(admin, ctx);
  registerReleaseClaim(admin, ctx);
  registerGc(admin, ctx);
  registerAudit(admin, ctx);
}
