import { defineRule } from '../rule.js';

export default defineRule({
  id: 'js-remote-code',
  severity: 'high',
  description:
    '`import()` of a remote URL, or a script element whose src is one: code fetched at run time, which the registry never saw.',
  hint: 'ship the script in the node (web/lib/…) and load it by a relative path',
  requires: {},
  patterns: {},
  resolved: ['javascript'],
  examples: {
    javascript: {
      bad: `export async function load() {
  const lib = await import("https://cdn.example.invalid/lib.js"); // finding
  const s = document.createElement("script");
  s.src = "https://cdn.example.invalid/x.js"; // finding
  return lib;
}
`,
      good: `// import("https://cdn.example.invalid/lib.js")
export async function load() {
  const s = document.createElement("script");
  s.src = "./lib/x.js";
  return import("./lib/local.js");
}
`,
    },
  },
});
