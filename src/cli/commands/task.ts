import { Argument, type Command } from 'commander';
import { TASK_KINDS } from '../../contract/limits.js';
import { addWaitOptions, fetchStatus, finishTask, waitPlan, type TaskKind, type WaitOptions } from '../ai-tasks.js';
import type { Ctx } from '../context.js';
import { examples } from './index.js';

export function register(program: Command, ctx: Ctx): void {
  const task = program.command('task').description('follow AI proxy tasks (relight, skin enhancer, video extend)');
  examples(task, ['nodereg task status relight TASK_ID --wait', 'nodereg task status video TASK_ID --output extended.mp4']);
  const status = task
    .command('status')
    .description('show the status and results of a task; --wait polls until it is done')
    .addArgument(new Argument('<kind>', 'the kind of task').choices(TASK_KINDS))
    .argument('<taskId>', 'the task id printed when it was started');
  addWaitOptions(status).action(async (kind: TaskKind, taskId: string, options: WaitOptions) => {
    const plan = waitPlan(options);
    const client = await ctx.client({ requireToken: true });
    const answer = await fetchStatus(client, kind, taskId);
    await finishTask(ctx, client, kind, answer, plan, false);
  });
  examples(status, [
    'nodereg task status relight TASK_ID',
    'nodereg task status video TASK_ID --wait --timeout 30m',
    'nodereg task status skin-enhancer TASK_ID --output results/',
  ]);
}
