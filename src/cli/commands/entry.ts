// What commands/index.ts lists: a command's name, summary and lazy module.
import type { Command } from 'commander';
import type { Ctx } from '../context.js';

export interface CommandModule {
  /** `commands` is the whole list, for the one command that describes the others (completion). */
  register(program: Command, ctx: Ctx, commands: readonly CommandEntry[]): void;
}

export interface CommandEntry {
  name: string;
  summary: string;
  /** Imported only when this command runs, so start-up pays for one command at most. */
  load: () => Promise<CommandModule>;
}
