import type { Node } from 'web-tree-sitter';
import { ancestors, defineRule, insideFunction } from '../rule.js';

/** Inside `if __name__ == "__main__":`, which runs when the file is executed, not imported. */
function insideMainGuard(node: Node): boolean {
  return ancestors(node).some(
    (n) =>
      n.type === 'if_statement' &&
      /__name__\s*==\s*['"]__main__['"]/.test(n.childForFieldName('condition')?.text ?? ''),
  );
}

export default defineRule({
  id: 'network-at-import',
  severity: 'medium',
  description:
    'A network call that runs when the module is imported: every start of the host application waits for it, and it can send data nobody asked to send.',
  hint: 'make the call inside the function that needs it, when the user runs the node',
  requires: {
    names: ['requests', 'httpx', 'urllib3', 'aiohttp', 'urllib', 'urlopen', 'urlretrieve', 'socket', 'http'],
  },
  patterns: {
    python: `
((call function: (attribute object: (identifier) @object attribute: (identifier) @name)) @finding
 (#any-of? @object "requests" "httpx" "urllib3" "aiohttp")
 (#any-of? @name "get" "post" "put" "patch" "delete" "head" "options" "request" "urlopen" "stream"))
((call function: (attribute object: (attribute object: (identifier) @object attribute: (identifier) @module) attribute: (identifier) @name)) @finding
 (#eq? @object "urllib") (#eq? @module "request") (#any-of? @name "urlopen" "urlretrieve"))
((call function: (identifier) @name) @finding
 (#any-of? @name "urlopen" "urlretrieve"))
((call function: (attribute object: (identifier) @object attribute: (identifier) @name)) @finding
 (#eq? @object "socket") (#any-of? @name "create_connection" "getaddrinfo" "gethostbyname"))
((call function: (attribute object: (attribute object: (identifier) @object attribute: (identifier) @module) attribute: (identifier) @name)) @finding
 (#eq? @object "http") (#eq? @module "client") (#any-of? @name "HTTPConnection" "HTTPSConnection"))`,
  },
  check: ({ finding }) =>
    insideFunction(finding) || insideMainGuard(finding)
      ? undefined
      : `network call at import time: ${finding.text.split('\n')[0].slice(0, 80)}`,
  examples: {
    python: {
      bad: `import requests, socket
import urllib.request

LATEST = requests.get("https://example.invalid/version").text  # finding
try:
    urllib.request.urlopen("https://example.invalid/ping")  # finding
except OSError:
    pass

class Config:
    remote = requests.post("https://example.invalid/register", json={})  # finding

socket.create_connection(("example.invalid", 80))  # finding
`,
      good: `import requests
"""requests.get("https://example.invalid/version") runs only on demand."""

# LATEST = requests.get("https://example.invalid/version").text
URL = 'requests.get("https://example.invalid/version")'

def latest():
    return requests.get("https://example.invalid/version").text

if __name__ == "__main__":
    print(requests.get("https://example.invalid/version").text)
`,
    },
  },
});
