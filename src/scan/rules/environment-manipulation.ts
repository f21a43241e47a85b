import { defineRule } from '../rule.js';

export default defineRule({
  id: 'environment-manipulation',
  severity: 'medium',
  description:
    'Writes to `os.environ`, `sys.path`, site-packages or `PATH`: changes that reach every other node in the same process.',
  hint: 'import through your package (relative imports) and pass settings as arguments instead of changing the process',
  requires: { names: ['environ', 'sys', 'putenv', 'unsetenv', 'addsitedir'], text: /(?:site|dist)-packages/ },
  patterns: {
    python: `
((assignment left: (subscript value: (attribute object: (identifier) @object attribute: (identifier) @name))) @finding
 (#any-of? @object "os" "sys") (#any-of? @name "environ" "path"))
((augmented_assignment left: (subscript value: (attribute object: (identifier) @object attribute: (identifier) @name))) @finding
 (#any-of? @object "os" "sys") (#any-of? @name "environ" "path"))
((delete_statement (subscript value: (attribute object: (identifier) @object attribute: (identifier) @name))) @finding
 (#eq? @object "os") (#eq? @name "environ"))
((call function: (attribute object: (attribute object: (identifier) @object attribute: (identifier) @name) attribute: (identifier) @method)) @finding
 (#eq? @object "os") (#eq? @name "environ") (#any-of? @method "update" "setdefault" "pop" "popitem" "clear"))
((call function: (attribute object: (attribute object: (identifier) @object attribute: (identifier) @name) attribute: (identifier) @method)) @finding
 (#eq? @object "sys") (#eq? @name "path") (#any-of? @method "append" "insert" "extend" "clear"))
((assignment left: (attribute object: (identifier) @object attribute: (identifier) @name) right: (_) @value) @finding
 (#eq? @object "sys") (#eq? @name "path"))
((augmented_assignment left: (attribute object: (identifier) @object attribute: (identifier) @name)) @finding
 (#eq? @object "sys") (#eq? @name "path"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name)) @finding
 (#eq? @object "os") (#any-of? @name "putenv" "unsetenv"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name)) @finding
 (#eq? @object "site") (#eq? @name "addsitedir"))
((call arguments: (argument_list (string (string_content) @path))) @finding
 (#match? @path "(site|dist)-packages"))`,
  },
  // `sys.path = saved` puts back what the node kept: a restore, as `sys.path.remove(added)` is
  check: ({ finding, value }) =>
    value?.type === 'identifier'
      ? undefined
      : `changes the process for every node: ${finding.text.split('\n')[0].slice(0, 80)}`,
  examples: {
    python: {
      bad: `import os, site, sys

os.environ["PATH"] = "/opt/tools/bin:" + os.environ["PATH"]  # finding
os.environ.update({"HF_HOME": "/tmp/hf"})  # finding
sys.path.append(os.path.dirname(__file__))  # finding
sys.path.insert(0, "/usr/lib/python3")  # finding
site.addsitedir("/opt/extra")  # finding
handle = open("/usr/lib/python3/site-packages/extra.pth", "w")  # finding
`,
      good: `import os, sys
"""Never sys.path.append(here) or os.environ["PATH"] = here."""

# sys.path.append(os.path.dirname(__file__))
text = 'os.environ["PATH"] = "/opt/tools/bin"'
home = os.environ.get("HOME", "")
paths = list(sys.path)
`,
    },
  },
});
