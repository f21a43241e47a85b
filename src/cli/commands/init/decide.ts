import { basename } from 'node:path';
import type { Asker } from './ask.js';
import { check, splitTags } from './check.js';
import { seenInTheDirectory } from './directory.js';
import type { Entry, Options } from './entry.js';
import type { Pyproject } from './read.js';

/** What deciding an entry looks at: the flags, the file as it is, and a way to ask for the rest. */
export interface Decider {
  dir: string;
  options: Options;
  pyproject: Pyproject;
  asker: Asker;
  fromComfy: (key: string) => string | undefined;
}

/** The keys init would set, in the order it asks for them. */
export async function decideEntries(d: Decider): Promise<Entry[]> {
  const name = await decideName(d);
  const entries: Entry[] = [{ table: 'project', key: 'name', value: name, flag: '--name' }];
  entries.push(await decideVersion(d));
  const description = await decideDescription(d);
  if (description) entries.push({ table: 'project', key: 'description', value: description, flag: '--description' });
  entries.push(...(await decideTool(d, name)));
  // A new file also gets what `comfy node init` writes from the directory, so validate has nothing to warn of that init knew.
  if (!d.pyproject.exists) entries.push(...seenInTheDirectory(d.dir));
  return entries;
}

// [project] name and version: kept when present; a new file gets them from flags, prompts or defaults.
async function decideName({ dir, options, pyproject: { project }, asker }: Decider): Promise<string> {
  const name = options.name ?? (typeof project.name === 'string' ? project.name : undefined);
  if (name !== undefined) return name;
  const dirName = basename(dir)
    .replace(/[^a-zA-Z0-9._-]+/g, '-')
    .replace(/^[^a-zA-Z0-9]+|[^a-zA-Z0-9]+$/g, '');
  const fallback = check.name(dirName) ? undefined : dirName;
  if (asker.interactive) return asker.ask('Node id ([project] name)', check.name, fallback);
  if (fallback) return fallback;
  return asker.needFlag('--name', `the directory name "${basename(dir)}" is not a valid node id`);
}

async function decideVersion({
  options,
  pyproject: { project, tool, versionIsDynamic },
  asker,
}: Decider): Promise<Entry> {
  if (versionIsDynamic) {
    let version = options.version ?? (typeof tool.version === 'string' ? tool.version : undefined);
    if (version === undefined) {
      if (asker.interactive)
        version = await asker.ask(
          'Version ([project] version is dynamic, so [tool.nodereg] version)',
          check.version,
          '0.1.0',
        );
      else asker.needFlag('--version', '[project] version is dynamic, so nodereg needs [tool.nodereg] version');
    }
    return { table: 'tool.nodereg', key: 'version', value: version!, flag: '--version' };
  }
  let version = options.version ?? (typeof project.version === 'string' ? project.version : undefined);
  if (version === undefined) version = asker.interactive ? await asker.ask('Version', check.version, '0.1.0') : '0.1.0';
  return { table: 'project', key: 'version', value: version, flag: '--version' };
}

async function decideDescription({ options, pyproject: { project, exists }, asker }: Decider) {
  const description =
    options.description ?? (typeof project.description === 'string' ? project.description : undefined);
  if (description === undefined && asker.interactive && !exists)
    return asker.ask('Description (optional)', check.description, undefined, true);
  return description;
}

/** [tool.nodereg]: what the flags, the table itself or [tool.comfy] do not give is asked for. */
async function decideTool({ options, pyproject: { tool }, asker, fromComfy }: Decider, name: string) {
  const entries: Entry[] = [];
  let publisher = options.publisher ?? (typeof tool.publisher === 'string' ? tool.publisher : undefined);
  if (publisher === undefined && fromComfy('PublisherId') === undefined) {
    if (asker.interactive) publisher = await asker.ask('Publisher id', check.publisher);
    else asker.needFlag('--publisher', 'pyproject.toml needs [tool.nodereg] publisher');
  }
  if (publisher !== undefined)
    entries.push({ table: 'tool.nodereg', key: 'publisher', value: publisher, flag: '--publisher' });

  let displayName =
    options.displayName ?? (typeof tool['display-name'] === 'string' ? tool['display-name'] : undefined);
  if (displayName === undefined && fromComfy('DisplayName') === undefined && asker.interactive)
    displayName = await asker.ask('Display name', check.displayName, name);
  if (displayName && (displayName !== name || tool['display-name'] !== undefined))
    entries.push({ table: 'tool.nodereg', key: 'display-name', value: displayName, flag: '--display-name' });

  let tags: string | string[] | undefined =
    options.tags ?? (Array.isArray(tool.tags) ? (tool.tags as string[]) : undefined);
  if (tags === undefined && asker.interactive)
    tags = await asker.ask('Tags, comma-separated (optional)', check.tags, undefined, true);
  if (typeof tags === 'string') tags = splitTags(tags);
  if (tags?.length) entries.push({ table: 'tool.nodereg', key: 'tags', value: tags, flag: '--tags' });

  if (options.icon) entries.push({ table: 'tool.nodereg', key: 'icon', value: options.icon, flag: '--icon' });
  else fromComfy('Icon');
  return entries;
}
