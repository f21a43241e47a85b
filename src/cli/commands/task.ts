import { Argument, type Command } from 'commander';
import { TASK_KINDS } from '../../contract/limits.js';
import { fetchStatus, type TaskKind } from '../ai-task-state.js';
import { addWaitOptions, finishTask, waitPlan, type WaitOptions } from '../ai-tasks.js';
import type { Ctx } from '../context.js';
import { examples } from '../examples.js';

/** The command that starts a task, where it differs from the task's kind: `task status skin-enhance ID` works too. */
const KIND_OF_COMMAND: Record<string, TaskKind> = { 'skin-enhance': 'skin-enhancer', 'video-extend': 'video' };

export function register(program: Command, ctx: Ctx): void {
  const task = program.command('task').description('follow AI proxy tasks (relight, skin enhancer, video extend)');
  examples(task, [
    'nodereg task status relight TASK_ID --wait',
    'nodereg task status video TASK_ID --output extended.mp4',
  ]);
  const status = task
    .command('status')
    .description('show the status and results of a task; --wait polls until it is done')
    .addArgument(
      new Argument('<kind>', 'the kind of task, or the command that started it').choices([
        ...TASK_KINDS,
        ...Object.keys(KIND_OF_COMMAND),
      ]),
    )
    .argument('<taskId>', 'the task id printed when it was started');
  addWaitOptions(status).action(async (given: string, taskId: string, options: WaitOptions) => {
    const kind = (KIND_OF_COMMAND[given] ?? given) as TaskKind;
    const plan = waitPlan(options, ctx.out.json);
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
