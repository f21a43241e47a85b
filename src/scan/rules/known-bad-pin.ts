import { defineRule } from '../rule.js';

export default defineRule({
  id: 'known-bad-pin',
  severity: 'critical',
  description:
    'A requirements file pins a version on the advisory list: a release known to be malicious. The list is shipped with nodereg, starts with public advisories, and the operator can replace it (NODEREG_SCAN_ADVISORIES).',
  hint: 'pin a version that is not on the advisory list',
  requires: {},
  patterns: {},
  resolved: ['requirements'],
  examples: {
    requirements: {
      bad: `ultralytics==8.3.41  # finding
`,
      good: `ultralytics==8.3.40
`,
    },
  },
});
