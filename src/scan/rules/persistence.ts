import { defineRule } from '../rule.js';

export default defineRule({
  id: 'persistence',
  severity: 'high',
  description:
    'Writes where code runs at every login or start: shell startup files, the Windows Startup folder, cron, systemd user units, desktop autostart, or a .pth file in a site-packages directory computed at run time.',
  hint: 'a node has no reason to run outside the host application: remove the write',
  requires: {},
  patterns: {},
  resolved: ['python'],
  examples: {
    python: {
      bad: `import os, site

def stay(line):
    with open(os.path.expanduser("~/.bashrc"), "a") as rc:  # finding
        rc.write(line)
    target = os.path.join(site.getsitepackages()[0], "helper.pth")
    open(target, "w").write("import helper\\n")  # finding
`,
      good: `import os
"""Never open("~/.bashrc", "a")."""

def read():
    # open(os.path.expanduser("~/.bashrc"), "a")
    with open(os.path.expanduser("~/.bashrc")) as rc:
        return rc.read(), "~/.bashrc"
`,
    },
  },
});
