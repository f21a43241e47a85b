import type { Command } from 'commander';
import type { Ctx } from '../context.js';

export interface CommandModule {
  register(program: Command, ctx: Ctx): void;
}

export interface CommandEntry {
  name: string;
  summary: string;
  /** Imported only when this command runs, so start-up pays for one command at most. */
  load: () => Promise<CommandModule>;
}

// One line per command; its file under commands/ registers the options and the action.
export const commands: CommandEntry[] = [
  { name: 'config', summary: 'get, set or list profile settings (registry, token)', load: () => import('./config.js') },
  { name: 'openapi', summary: 'print the OpenAPI document of the registry', load: () => import('./openapi.js') },
  { name: 'relight', summary: 'relight an image through the AI proxy', load: () => import('./relight.js') },
  { name: 'skin-enhance', summary: 'enhance the skin in an image through the AI proxy', load: () => import('./skin-enhance.js') },
  { name: 'video-extend', summary: 'extend a video through the AI proxy', load: () => import('./video-extend.js') },
  { name: 'task', summary: 'status and results of AI proxy tasks', load: () => import('./task.js') },
  { name: 'serve', summary: 'run the embedded registry (SQLite and local archives)', load: () => import('./serve.js') },
  { name: 'backup', summary: 'copy a consistent snapshot of a registry data dir, also while it serves', load: () => import('./backup.js') },
];

/** Adds an "Examples:" block to a command's help. */
export function examples(command: Command, lines: string[]): Command {
  return command.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}
