import { defineRule } from '../rule.js';

export default defineRule({
  id: 'install-hook',
  severity: 'medium',
  description:
    '`setup()` with `cmdclass`: commands of the package that run code when it is installed, before anyone imports it.',
  hint: 'declare the package in pyproject.toml without custom commands; do at run time what must be done',
  requires: {},
  patterns: {},
  resolved: ['python'],
  examples: {
    python: {
      bad: `from setuptools import setup
from setuptools.command.install import install

class Hook(install):
    pass

setup(name="x", cmdclass={"install": Hook})  # finding
`,
      good: `from setuptools import setup
# setup(name="x", cmdclass={"install": Hook})
setup(name="x", packages=["x"])
`,
    },
  },
});
