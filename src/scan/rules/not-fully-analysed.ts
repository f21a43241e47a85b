import { defineRule } from '../rule.js';

export default defineRule({
  id: 'not-fully-analysed',
  severity: 'info',
  description:
    'A file the resolution layer did not follow to its end: it holds more syntax nodes than the bound per file, or code nested deeper than the scan follows. The rules still ran; what the layer resolves (aliases, helpers, folded strings) may be missed past that point.',
  hint: 'split the file, or flatten the nesting; nothing to do if the file is generated data',
  requires: {},
  patterns: {},
  resolved: ['python', 'javascript'],
  examples: {
    python: {
      bad: `import subprocess
x = ${'['.repeat(250)}1${']'.repeat(250)}  # finding
`,
      good: `import subprocess
x = [[[1]]]
`,
    },
    javascript: {
      bad: `setTimeout(run, 1);
const x = ${'['.repeat(250)}1${']'.repeat(250)}; // finding
`,
      good: `setTimeout(run, 1);
const x = [[[1]]];
`,
    },
  },
});
