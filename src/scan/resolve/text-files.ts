// Shipped files that become code without being .py: requirements.txt (what the host installs: another
// index, a URL, a VCS checkout, a local path, or a version on the advisory list) and .pth files (a line
// starting with `import` runs at every start of Python). Read line by line; no parser.
import { readFileSync } from 'node:fs';

export interface LineFinding {
  rule: 'unsafe-requirement' | 'known-bad-pin' | 'pth-file';
  line: number;
  column: number;
  message: string;
}

/**
 * Versions known to be malicious, by package (normalised name). The operator may replace the list with
 * a JSON file of the same shape (`NODEREG_SCAN_ADVISORIES`): `{"package": ["version", …]}`.
 */
const PUBLIC_ADVISORIES: Record<string, string[]> = {
  // compromised releases published from a hijacked build pipeline (December 2024)
  ultralytics: ['8.3.41', '8.3.42', '8.3.45', '8.3.46'],
  // a hijacked package that sent environment variables out (May 2022)
  ctx: ['0.1.2', '0.2.2', '0.2.6'],
};

let advisories: Map<string, Set<string>> | undefined;
const normalise = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

export function advisoryList(): Map<string, Set<string>> {
  if (advisories) return advisories;
  const file = process.env.NODEREG_SCAN_ADVISORIES;
  const data = file ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string[]>) : PUBLIC_ADVISORIES;
  return (advisories = new Map(Object.entries(data).map(([name, versions]) => [normalise(name), new Set(versions)])));
}

/** For tests: read the list again (after NODEREG_SCAN_ADVISORIES changed). */
export const reloadAdvisories = () => (advisories = undefined);

export const isRequirements = (path: string) => /(?:^|\/)requirements[^/]*\.(?:txt|in)$/i.test(path);
export const isPth = (path: string) => /\.pth$/i.test(path);

const INDEX = /^(?:--(?:extra-)?index-url|-i|--trusted-host|-f|--find-links)(?:[\s=]|$)/;
const VCS = /^(?:-e\s+)?(?:git|hg|svn|bzr)\+/i;
const URL = /(?:^|[\s@])(?:https?|ftp|file):\/\//i;
const LOCAL = /^(?:-e\s+)?(?:\.{1,2}[\\/]|[\\/]|~|[A-Za-z]:[\\/])|\.(?:whl|tar\.gz|zip|tgz)$/i;
const PIN = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*([A-Za-z0-9.+!-]+)/;

export function requirementFindings(text: string): LineFinding[] {
  const out: LineFinding[] = [];
  text.split(/\r?\n|\r/).forEach((raw, i) => {
    const line = raw.replace(/(?:^|\s)#.*$/, '').trim();
    if (!line) return;
    const column = raw.indexOf(line[0]) + 1;
    const at = (rule: LineFinding['rule'], message: string) => out.push({ rule, line: i + 1, column, message });
    if (INDEX.test(line)) return at('unsafe-requirement', `installs from another index or host: ${line.slice(0, 80)}`);
    if (VCS.test(line))
      return at(
        'unsafe-requirement',
        `installs a version-control checkout, which can change under the same line: ${line.slice(0, 80)}`,
      );
    if (URL.test(line)) return at('unsafe-requirement', `installs from a URL, outside any index: ${line.slice(0, 80)}`);
    if (/^-[rc]\s/.test(line) || /^--(?:requirement|constraint)\b/.test(line)) return;
    if (LOCAL.test(line)) return at('unsafe-requirement', `installs a local path: ${line.slice(0, 80)}`);
    const pin = PIN.exec(line);
    if (pin && advisoryList().get(normalise(pin[1]))?.has(pin[2]))
      at('known-bad-pin', `${pin[1]}==${pin[2]} is a version on the advisory list (known malicious)`);
  });
  return out;
}

export function pthFindings(text: string): LineFinding[] {
  const out: LineFinding[] = [];
  text.split(/\r?\n|\r/).forEach((line, i) => {
    // site.py runs a line that starts with `import` followed by a space or a tab
    if (/^import[ \t]/.test(line))
      out.push({
        rule: 'pth-file',
        line: i + 1,
        column: 1,
        message: `a .pth line that runs code at every start of Python: ${line.slice(0, 80)}`,
      });
  });
  return out;
}
