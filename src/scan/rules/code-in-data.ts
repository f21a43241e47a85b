import { defineRule } from '../rule.js';

export default defineRule({
  id: 'code-in-data',
  severity: 'medium',
  description:
    'Runs a shipped file that is not .py as Python (SourceFileLoader, exec(open(…).read()), compile(Path(…).read_text())): code kept where readers do not look. The scan reads that file as Python too.',
  hint: 'ship the code as a .py module and import it',
  requires: {},
  patterns: {},
  resolved: ['python'],
  examples: {
    python: {
      bad: `import os
from importlib.machinery import SourceFileLoader

HERE = os.path.dirname(__file__)
hooks = SourceFileLoader("hooks", os.path.join(HERE, "hooks.txt")).load_module()  # finding
`,
      good: `import json, os
from importlib.machinery import SourceFileLoader

HERE = os.path.dirname(__file__)
hooks = SourceFileLoader("hooks", os.path.join(HERE, "hooks.py")).load_module()
data = json.loads(open(os.path.join(HERE, "hooks.txt")).read())
`,
    },
  },
});
