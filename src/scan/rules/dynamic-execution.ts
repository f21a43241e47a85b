import type { Node } from 'web-tree-sitter';
import { defineRule, isLiteral, stringsIn } from '../rule.js';

/** Calls that run code or a shell command: reached by name, they are as risky as when called. */
const RISKY_NAMES = new Set(['eval', 'exec', 'compile', 'system', 'popen', 'getoutput', 'getstatusoutput']);
/** Modules that hold them. */
const RISKY_MODULES = new Set(['builtins', '__builtins__', 'os', 'posix', 'nt', 'subprocess']);
const IMPORTERS = new Set(['__import__', 'importlib.import_module']);

/** The module a node names: `os`, or `__import__("os")` / `importlib.import_module("os")`; a computed import gives "". */
function moduleOf(node: Node): string | undefined {
  if (node.type === 'identifier' || node.type === 'dotted_name') return node.text;
  if (node.type !== 'call' || !IMPORTERS.has(node.childForFieldName('function')?.text ?? '')) return undefined;
  const first = node.childForFieldName('arguments')?.namedChildren[0];
  return first && isLiteral(first) ? stringsIn(first).join('') : '';
}

export default defineRule({
  id: 'dynamic-execution',
  severity: 'high',
  description:
    '`eval`, `exec` or `compile` of a value computed at run time, however it is reached (`getattr`, `__import__`/`importlib`, `__builtins__`, `globals()`, `vars()`, an alias, a container, a lambda or a helper function), or `getattr` of a risky module with a name computed at run time. Code that no reviewer can read before it runs.',
  hint: 'call the code directly; to read data use json.loads or ast.literal_eval',
  requires: {
    names: [
      'eval',
      'exec',
      'compile',
      'getattr',
      '__import__',
      'import_module',
      'system',
      'popen',
      'getoutput',
      'getstatusoutput',
    ],
  },
  patterns: {
    python: `
((call function: (identifier) @name arguments: (argument_list . (_) @arg)) @finding
 (#any-of? @name "eval" "exec" "compile"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name) arguments: (argument_list . (_) @arg)) @finding
 (#any-of? @object "builtins" "__builtins__") (#any-of? @name "eval" "exec" "compile"))
((call function: (identifier) @getattr arguments: (argument_list . (_) @target . (_) @attribute)) @finding
 (#eq? @getattr "getattr"))
((attribute object: (call) @target attribute: (identifier) @attribute) @finding)
`,
  },
  check: ({ name, arg, target, attribute, getattr }) => {
    if (target) {
      const module = moduleOf(target);
      if (module === undefined || (module && !RISKY_MODULES.has(module))) return undefined;
      // a class or function taken from a module named at run time: code of the node's own choosing, not a string run as code
      if (getattr && module === '') return undefined;
      const literal = isLiteral(attribute);
      const called = literal ? stringsIn(attribute).join('') : attribute.text;
      if (getattr)
        return literal
          ? RISKY_NAMES.has(called)
            ? `getattr() reaches ${target.text.slice(0, 40)}.${called}`
            : undefined
          : `getattr() of ${target.text.slice(0, 40)} with a name computed at run time`;
      if (!RISKY_NAMES.has(called)) return undefined;
      return `${target.text.slice(0, 60)}.${called} hides the module behind an import call`;
    }
    const value = arg.type === 'keyword_argument' ? arg.childForFieldName('value') : arg;
    return isLiteral(value) ? undefined : `${name.text}() of a value computed at run time`;
  },
  examples: {
    python: {
      bad: `import builtins, importlib, os
from builtins import exec as run_code

def run(source, scope, name):
    eval(source)  # finding
    exec(compile(source, "<node>", "exec"), scope)  # finding
    builtins.exec(source)  # finding
    getattr(builtins, "ex" + "ec")(source)  # finding
    run_code(source)  # finding
    runner = eval
    runner(source)  # finding
    return eval(f"{source} + 1")  # finding
`,
      good: `import importlib, os, re
from os import path, system
from subprocess import run
"""Never eval(source) or exec(source) here, nor getattr(os, "system")."""

def load(source, model, name, module):
    # eval(source) would run anything
    message = "do not exec(source)"
    pattern = re.compile(source)
    model.eval()
    handler = getattr(model, name)
    sep = getattr(os, "sep")
    plugin = importlib.import_module(f".{name}", __name__)
    version = __import__(module).__version__
    return eval("1 + 1"), pattern, message, handler, sep, plugin, version, path, run, system, getattr(importlib.import_module(module), name)
`,
    },
  },
});
