import { defineRule } from '../rule.js';

export default defineRule({
  id: 'bytecode-manipulation',
  severity: 'high',
  description:
    '`marshal.loads`, `types.CodeType` or assigning `__code__`: code built from bytecode, which no one can review as source.',
  hint: 'ship the code as Python source',
  requires: { names: ['marshal', 'CodeType', 'FunctionType', '__code__'] },
  patterns: {
    python: `
((call function: (attribute object: (identifier) @object attribute: (identifier) @name)) @finding
 (#eq? @object "marshal") (#any-of? @name "loads" "load"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name)) @finding
 (#eq? @object "types") (#any-of? @name "CodeType" "FunctionType"))
((call function: (identifier) @name) @finding
 (#eq? @name "CodeType"))
((assignment left: (attribute attribute: (identifier) @name)) @finding
 (#eq? @name "__code__"))`,
  },
  message: ({ finding }) => `builds code from bytecode: ${finding.text.split('\n')[0].slice(0, 80)}`,
  examples: {
    python: {
      bad: `import marshal, types
from types import CodeType

def build(blob, other):
    code = marshal.loads(blob)  # finding
    raw = types.CodeType(0, 0, 0, 0, 0, 0, b"", (), (), (), "", "", 0, b"")  # finding
    again = CodeType(0, 0, 0, 0, 0, 0, b"", (), (), (), "", "", 0, b"")  # finding
    build.__code__ = other.__code__  # finding
    return code, raw, again
`,
      good: `import json, marshal
"""marshal.loads(blob) is not used here."""

def build(blob, other):
    # build.__code__ = other.__code__
    text = "marshal.loads(blob)"
    data = marshal.dumps(json.loads(blob))
    name = other.__code__.co_name
    return data, name, text
`,
    },
  },
});
