// `nodereg admin`: the admins' review of Flagged versions (DESIGN.md §14); one file per verb.
import type { Command } from 'commander';
import type { Ctx } from '../context.js';
import { examples } from '../examples.js';
import { registerDecide } from './admin-decide.js';
import { registerQueue } from './admin-queue.js';

export function register(program: Command, ctx: Ctx): void {
  const admin = examples(program.command('admin').description('review Flagged versions: the queue and decisions'), [
    'nodereg admin queue',
    'nodereg admin decide my-node 1.2.0 --decision approve --message "reviewed"',
  ]);
  registerQueue(admin, ctx);
  registerDecide(admin, ctx);
}
