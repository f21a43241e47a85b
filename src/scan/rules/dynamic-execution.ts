import { defineRule, isLiteral } from '../rule.js';

export default defineRule({
  id: 'dynamic-execution',
  severity: 'high',
  description: '`eval`, `exec` or `compile` of a value computed at run time: code that no reviewer can read before it runs.',
  hint: 'call the code directly; to read data use json.loads or ast.literal_eval',
  requires: { names: ['eval', 'exec', 'compile'] },
  patterns: {
    python: `
((call function: (identifier) @name arguments: (argument_list . (_) @arg)) @finding
 (#any-of? @name "eval" "exec" "compile"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name) arguments: (argument_list . (_) @arg)) @finding
 (#any-of? @object "builtins" "__builtins__") (#any-of? @name "eval" "exec" "compile"))`,
  },
  check: ({ name, arg }) => {
    const value = arg.type === 'keyword_argument' ? arg.childForFieldName('value') : arg;
    return isLiteral(value) ? undefined : `${name.text}() of a value computed at run time`;
  },
  examples: {
    python: {
      bad: `import builtins

def run(source, scope):
    eval(source)  # finding
    exec(compile(source, "<node>", "exec"), scope)  # finding
    builtins.exec(source)  # finding
    return eval(f"{source} + 1")  # finding
`,
      good: `import re
"""Never eval(source) or exec(source) here."""

def run(source, model):
    # eval(source) would run anything
    message = "do not exec(source)"
    pattern = re.compile(source)
    model.eval()
    return eval("1 + 1"), pattern, message
`,
    },
  },
});
