// Every command and subcommand with its options, read from the real command modules of the list the
// caller gives (commands/index.ts), so this module imports no command: completion and the help test derive from it.
import { Command } from 'commander';
import type { CommandEntry } from './commands/entry.js';
import { Ctx } from './context.js';

export interface CommandNode {
  name: string;
  summary: string;
  /** Long option names, e.g. `--json`. */
  options: string[];
  subcommands: CommandNode[];
  /** Words from the root, e.g. `['publisher', 'members', 'add']`. */
  path: string[];
}

function toNode(command: Command, parent: string[]): CommandNode {
  const path = [...parent, command.name()];
  return {
    name: command.name(),
    summary: command.summary() || command.description(),
    options: command.options.map((o) => o.long).filter((o): o is string => Boolean(o)),
    // as help lists them: a hidden command (`node publish`, which only says where publish is) is not offered
    subcommands: command
      .createHelp()
      .visibleCommands(command)
      .filter((c) => c.name() !== 'help')
      .map((c) => toNode(c, path)),
    path,
  };
}

/** Loads every command module into a program of its own (nothing runs) and describes it. */
export async function commandTree(
  commands: readonly CommandEntry[],
  version: string,
  globalOptions: string[] = [],
): Promise<{ globalOptions: string[]; commands: CommandNode[] }> {
  const program = new Command('nodereg');
  const ctx = new Ctx(() => program.opts(), version, {});
  for (const entry of commands) (await entry.load()).register(program, ctx, commands);
  return { globalOptions, commands: program.commands.map((c) => toNode(c, [])) };
}

/** Every command and subcommand, depth first. */
export function flatten(nodes: CommandNode[]): CommandNode[] {
  return nodes.flatMap((n) => [n, ...flatten(n.subcommands)]);
}
