import { Argument, type Command } from 'commander';
import { commandTree, flatten, type CommandNode } from '../command-tree.js';
import type { Ctx } from '../context.js';
import type { CommandEntry } from './entry.js';
import { examples } from '../examples.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

export function register(program: Command, ctx: Ctx, commands: readonly CommandEntry[]): void {
  examples(
    program
      .command('completion')
      .description('print a shell completion script for commands, subcommands and options')
      .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
      .action(async (shell: Shell) => {
        const globals = [...program.options.map((o) => o.long).filter((o): o is string => Boolean(o)), '--help'];
        const tree = await commandTree(commands, ctx.version, globals);
        const script = { bash: bashScript, zsh: zshScript, fish: fishScript }[shell](tree.commands, tree.globalOptions);
        ctx.out.stdout.write(script);
      }),
    [
      'source <(nodereg completion bash)                       # add to ~/.bashrc',
      'nodereg completion zsh > "${fpath[1]}/_nodereg"',
      'nodereg completion fish > ~/.config/fish/completions/nodereg.fish',
    ],
  );
}

/** Shell-safe single-quoted text. */
const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const key = (node: CommandNode) => `/${node.path.join('/')}`;

/** bash: walk the words typed so far along known command paths, then offer what follows. */
function bashScript(roots: CommandNode[], globals: string[]): string {
  const nodes = flatten(roots);
  const paths = nodes.map(key).join('|');
  const names = (list: CommandNode[]) => quote(list.map((c) => c.name).join(' '));
  const cases = [
    `    "") subs=${names(roots)} ;;`,
    ...nodes.map((n) => `    ${key(n)}) subs=${names(n.subcommands)}; opts=${quote(n.options.join(' '))} ;;`),
  ].join('\n');
  return `# nodereg completion for bash. Load it with: source <(nodereg completion bash)
_nodereg() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmdpath="" word i subs="" opts=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    case "$cmdpath/$word" in
      ${paths}) cmdpath="$cmdpath/$word" ;;
    esac
  done
  case "$cmdpath" in
${cases}
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts ${globals.join(' ')}" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  fi
}
complete -o default -F _nodereg nodereg
`;
}

/** zsh: the same walk, with each subcommand described. */
function zshScript(roots: CommandNode[], globals: string[]): string {
  const nodes = flatten(roots);
  const paths = nodes.map(key).join('|');
  const describe = (list: CommandNode[]) =>
    list.map((c) => quote(`${c.name}:${c.summary.replace(/:/g, '\\:')}`)).join(' ');
  const branch = (label: string, children: CommandNode[], options: string[]) =>
    children.length
      ? `    (${label}) described=(${describe(children)}) ;;`
      : `    (${label}) plain=(${options.join(' ')}) ;;`;
  const cases = [branch('""', roots, []), ...nodes.map((n) => branch(key(n), n.subcommands, n.options))].join('\n');
  return `#compdef nodereg
# nodereg completion for zsh. Install with: nodereg completion zsh > "\${fpath[1]}/_nodereg"
_nodereg() {
  local cmdpath="" word i
  local -a described plain
  for ((i = 2; i < CURRENT; i++)); do
    word=\${words[i]}
    case "$cmdpath/$word" in
      (${paths}) cmdpath="$cmdpath/$word" ;;
    esac
  done
  case "$cmdpath" in
${cases}
  esac
  if [[ \${words[CURRENT]} == -* ]]; then
    compadd -- \${plain[@]} ${globals.join(' ')}
  elif (( \${#described} )); then
    _describe 'command' described
  else
    _files
  fi
}
compdef _nodereg nodereg
`;
}

/** fish: one `complete` line per subcommand and option, conditioned on the words already typed. */
function fishScript(roots: CommandNode[], globals: string[]): string {
  const lines = [
    '# nodereg completion for fish. Install with: nodereg completion fish > ~/.config/fish/completions/nodereg.fish',
    'complete -c nodereg -f',
  ];
  const seen = (path: string[]) => path.map((p) => `__fish_seen_subcommand_from ${p}`).join('; and ');
  const offer = (condition: string, children: CommandNode[]) => {
    for (const child of children)
      lines.push(`complete -c nodereg -n ${quote(condition)} -a ${child.name} -d ${quote(child.summary)}`);
  };
  offer('__fish_use_subcommand', roots);
  for (const node of flatten(roots)) {
    const inside = seen(node.path);
    if (node.subcommands.length) {
      offer(
        `${inside}; and not __fish_seen_subcommand_from ${node.subcommands.map((c) => c.name).join(' ')}`,
        node.subcommands,
      );
    }
    for (const option of node.options) lines.push(`complete -c nodereg -n ${quote(inside)} -l ${option.slice(2)}`);
  }
  for (const option of globals) lines.push(`complete -c nodereg -l ${option.slice(2)}`);
  return `${lines.join('\n')}\n`;
}
