import { defineRule } from '../rule.js';

export default defineRule({
  id: 'unsafe-requirement',
  severity: 'high',
  description:
    'A requirements file line that installs from outside the index the user trusts: --index-url, --extra-index-url, --trusted-host, --find-links, a URL, a git+ (or other VCS) checkout or a local path.',
  hint: 'name the package and a version range from PyPI; publish what you need there',
  requires: {},
  patterns: {},
  resolved: ['requirements'],
  examples: {
    requirements: {
      bad: `numpy>=1.24
--extra-index-url https://pypi.example.invalid/simple  # finding
git+https://github.com/example/pkg.git  # finding
https://example.invalid/pkg-1.0.tar.gz  # finding
`,
      good: `# --extra-index-url https://pypi.example.invalid/simple
numpy>=1.24
torch==2.3.0 ; platform_system != "Darwin"
-r more-requirements.txt
`,
    },
  },
});
