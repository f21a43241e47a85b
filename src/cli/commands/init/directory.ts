import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Entry } from './entry.js';

/**
 * What `comfy node init` takes from the directory: the root license file, the packages of
 * requirements.txt (without its comments and pip options, which are no packages), and the git
 * remote `origin` as the repository (an SSH remote as its https URL, never a user or token in it).
 */
export function seenInTheDirectory(dir: string): Entry[] {
  const entries: Entry[] = [];
  if (!existsSync(dir)) return entries; // init makes it
  const license = readdirSync(dir)
    .sort()
    .find((name) => LICENSE_FILE.test(name));
  if (license) entries.push({ table: 'project', key: 'license', value: { file: license }, flag: 'a LICENSE file' });
  const requirements = join(dir, 'requirements.txt');
  if (existsSync(requirements)) {
    const packages = readFileSync(requirements, 'utf8')
      .split(/\r?\n/)
      .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
      .filter((line) => line && !line.startsWith('-'));
    if (packages.length)
      entries.push({ table: 'project', key: 'dependencies', value: packages, flag: 'requirements.txt' });
  }
  const remote = spawnSync('git', ['remote', 'get-url', 'origin'], { cwd: dir, encoding: 'utf8' });
  const repository = remote.status === 0 ? repositoryUrl(remote.stdout.trim()) : undefined;
  if (repository)
    entries.push({ table: 'project.urls', key: 'Repository', value: repository, flag: 'the git remote origin' });
  return entries;
}

const LICENSE_FILE = /^(licen[cs]e|copying)(\.[a-z]+)?$/i;

/** `git@github.com:ada/x.git` or `https://token@github.com/ada/x.git` → `https://github.com/ada/x`; undefined for any other kind of remote. */
function repositoryUrl(remote: string): string | undefined {
  const scp = /^[\w.-]+@([\w.-]+):(?!\/)(.+)$/.exec(remote);
  let url: URL;
  try {
    url = new URL(scp ? `https://${scp[1]}/${scp[2]}` : remote);
  } catch {
    return undefined;
  }
  if (!['https:', 'http:', 'ssh:'].includes(url.protocol)) return undefined;
  const path = url.pathname.replace(/\.git$/, '').replace(/\/+$/, '');
  // an SSH remote's port is SSH's, not the web's
  const base =
    url.protocol === 'http:' ? `http://${url.host}` : `https://${url.protocol === 'ssh:' ? url.hostname : url.host}`;
  return path ? `${base}${path}` : undefined;
}
