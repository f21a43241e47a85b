import { defineRule } from '../rule.js';

export default defineRule({
  id: 'pth-file',
  severity: 'high',
  description:
    'A shipped .pth file with a line starting with `import`: installed into site-packages, it runs at every start of Python.',
  hint: 'remove the .pth file; import the code where the node needs it',
  requires: {},
  patterns: {},
  resolved: ['pth'],
  examples: {
    pth: {
      bad: `# paths for the vendored packages
vendor
import helper; helper.start()  # finding
`,
      good: `# import helper is not run from a comment
vendor
lib/extra
`,
    },
  },
});
