import type { Node } from 'web-tree-sitter';
import { defineRule, isLiteral, stringsIn } from '../rule.js';

const RM_RF =
  /(^|[\s;&|(`])rm\s+(-[a-zA-Z]*(r[a-zA-Z]*f|f[a-zA-Z]*r)[a-zA-Z]*|-r\s+-f|-f\s+-r|--recursive\s+--force|--force\s+--recursive)(\s|$)/;

/** Mentions `__file__`: a path under the node's own directory (unless it climbs out with `..`). */
function underOwnDirectory(node: Node): boolean {
  const climbs = stringsIn(node).some((s) => s.split(/[\\/]/).includes('..'));
  return !climbs && node.descendantsOfType('identifier').some((id) => id?.text === '__file__');
}

function outsideLiteral(node: Node): boolean {
  const path = stringsIn(node).join('');
  return /^([\\/]|~|[A-Za-z]:)/.test(path) || path.split(/[\\/]/).includes('..');
}

export default defineRule({
  id: 'destructive-fs',
  severity: 'medium',
  description:
    "`rm -rf`, or `shutil.rmtree`/`os.remove` on a path outside the node's own directory or computed at run time: one wrong value deletes the user's files.",
  hint: 'delete only what the node created, under its own directory (a path built from __file__) or a tempfile directory it made',
  requires: { names: ['rmtree', 'remove', 'unlink', 'rmdir', 'removedirs', 'rm'] },
  patterns: {
    python: `
((call function: (attribute object: (identifier) @object attribute: (identifier) @name) arguments: (argument_list . (_) @arg)) @finding
 (#any-of? @object "shutil" "os") (#any-of? @name "rmtree" "remove" "unlink" "rmdir" "removedirs"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name) arguments: (argument_list) @args) @finding
 (#any-of? @object "os" "subprocess")
 (#any-of? @name "system" "popen" "run" "call" "check_call" "check_output" "Popen" "getoutput" "getstatusoutput"))`,
  },
  check: ({ object, name, arg, args }) => {
    const call = `${object.text}.${name.text}()`;
    if (args) return RM_RF.test(stringsIn(args).join(' ')) ? `${call} runs rm -rf` : undefined;
    const path = arg.type === 'keyword_argument' ? arg.childForFieldName('value')! : arg;
    if (isLiteral(path))
      return outsideLiteral(path)
        ? `${call} of a path outside the node's directory: ${path.text.slice(0, 80)}`
        : undefined;
    return underOwnDirectory(path) ? undefined : `${call} of a path computed at run time`;
  },
  examples: {
    python: {
      bad: `import os, shutil, subprocess

def clean(target):
    os.system("rm -rf ~/.cache/models")  # finding
    subprocess.run(["rm", "-rf", target])  # finding
    shutil.rmtree(target)  # finding
    os.remove("/etc/hosts")  # finding
    shutil.rmtree(os.path.join(os.path.dirname(__file__), "..", ".."))  # finding
`,
      good: `import os, shutil
"""shutil.rmtree(target) would be dangerous."""

def clean():
    # os.system("rm -rf ~/.cache/models")
    text = 'os.system("rm -rf ~/.cache/models")'
    shutil.rmtree(os.path.join(os.path.dirname(__file__), "cache"))
    os.remove("cache/old.bin")
    return text
`,
    },
  },
});
