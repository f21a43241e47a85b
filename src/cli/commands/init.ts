import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import type { Ctx } from '../context.js';
import { CliError, EXIT, invalidInput } from '../errors.js';
import { shellWord } from '../invocation.js';
import { makeUserDir } from '../make-dir.js';
import { examples } from '../examples.js';

interface Options {
  publisher?: string;
  name?: string;
  displayName?: string;
  version?: string;
  description?: string;
  tags?: string;
  icon?: string;
}

type Value = string | string[] | { file: string };
/** One key init would set: where it goes, and the flag that sets it. */
interface Entry {
  table: 'project' | 'project.urls' | 'tool.nodereg';
  key: string;
  value: Value;
  flag: string;
}

export function register(program: Command, ctx: Ctx): void {
  // `init --version 1.2.3` sets the node's version: the program's own --version flag (answered
  // before commander runs anyway) must not take it.
  const versionFlag = program.options.findIndex((option) => option.long === '--version');
  if (versionFlag >= 0) (program.options as Command['options'][number][]).splice(versionFlag, 1);

  const command = program
    .command('init [dir]')
    .description(
      'create pyproject.toml, or add the [tool.nodereg] table to an existing one (nothing else in it changes); asks on a terminal, takes flags otherwise',
    )
    .option('--publisher <id>', 'publisher id ([tool.nodereg] publisher)')
    .option('--name <id>', 'node id ([project] name; default: the directory name)')
    .option('--display-name <name>', 'display name ([tool.nodereg] display-name)')
    .option('--version <version>', 'version ([project] version; default 0.1.0 in a new file)')
    .option('--description <text>', 'description ([project] description)')
    .option('--tags <list>', 'comma-separated tags ([tool.nodereg] tags)')
    .option('--icon <url>', 'icon URL ([tool.nodereg] icon)')
    .action(async (dir: string | undefined, options: Options) => {
      // Without [dir], the project validate, pack and publish would use: a new file in a subdirectory would be a second one.
      const { projectDir } = await import('../project.js');
      return init(
        ctx,
        projectDir(ctx, dir, 'pyproject.toml', '; `nodereg init .` creates one here instead'),
        options,
        dir,
      );
    });
  examples(command, [
    'nodereg init',
    'nodereg init --publisher my-team --display-name "My Node" --tags image,upscale',
    'nodereg init ./my-node --publisher my-team --name my-node --version 1.0.0 --no-input',
  ]);
}

async function init(ctx: Ctx, dir: string, options: Options, given?: string): Promise<void> {
  const toml = await import('smol-toml');
  const { NodeWritable, nodeId, publisherId } = await import('../../contract/resources.js');
  const { versionToSemver, TOML_OPTIONS } = await import('../../package/manifest.js');
  const parse = (text: string) => toml.parse(text, TOML_OPTIONS);
  const stringify = toml.stringify;

  const file = join(dir, 'pyproject.toml');
  const exists = existsSync(file);
  const original = exists ? readFileSync(file, 'utf8') : '';
  let doc: Record<string, any> = {};
  try {
    doc = parse(original);
  } catch (error) {
    throw invalidInput(
      `${file} is not valid TOML: ${(error as Error).message.split('\n')[0]}`,
      'fix it by hand, then run `nodereg init` again',
    );
  }
  const project: Record<string, unknown> = doc.project ?? {};
  const tool: Record<string, unknown> = doc.tool?.nodereg ?? {};
  // The incumbent's table: what it sets is read by nodereg as it is, so init neither asks for it nor copies it.
  const comfy: Record<string, unknown> = doc.tool?.comfy ?? {};
  const adopted: string[] = [];
  const fromComfy = (key: string) => {
    const value = comfy[key];
    if (typeof value !== 'string' || value === '') return undefined;
    adopted.push(`[tool.comfy] ${key}`);
    return value;
  };
  const versionIsDynamic = Array.isArray(project.dynamic) && project.dynamic.includes('version');

  // Each field's rule is the contract's (or, for the version, the manifest's conversion).
  const check = {
    publisher: (v: string) => message(publisherId.safeParse(v)),
    name: (v: string) => message(nodeId.safeParse(v)),
    version: (v: string) => {
      const result = versionToSemver(v);
      return 'error' in result ? result.error : undefined;
    },
    displayName: (v: string) => message(NodeWritable.shape.name.safeParse(v)),
    description: (v: string) => message(NodeWritable.shape.description.safeParse(v)),
    tags: (v: string) => message(NodeWritable.shape.tags.safeParse(splitTags(v))),
    icon: (v: string) => message(NodeWritable.shape.icon.safeParse(v)),
  };
  for (const [field, value] of Object.entries(options) as [keyof Options, string][]) {
    const problem = check[field]?.(value);
    if (problem)
      throw invalidInput(`--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} "${value}": ${problem}`);
  }

  const interactive = ctx.interactive();
  const prompts = interactive ? await ctx.prompts() : undefined;
  const ask = async (
    question: string,
    validate: (v: string) => string | undefined,
    fallback?: string,
    optional = false,
  ) => {
    const answer = await prompts!.input({
      message: question,
      default: fallback,
      validate: (v: string) => (optional && v.trim() === '') || (validate(v.trim()) ?? true),
    });
    return answer.trim();
  };
  const needFlag = (flag: string, why: string): never => {
    throw invalidInput(
      `missing ${flag}: ${why}, and init cannot ask here (no terminal, CI is set, or --no-input)`,
      `nodereg init ${flag} <value>`,
    );
  };

  // [project] name and version: kept when present; a new file gets them from flags, prompts or defaults.
  const entries: Entry[] = [];
  const dirName = basename(dir)
    .replace(/[^a-zA-Z0-9._-]+/g, '-')
    .replace(/^[^a-zA-Z0-9]+|[^a-zA-Z0-9]+$/g, '');
  let name = options.name ?? (typeof project.name === 'string' ? project.name : undefined);
  if (name === undefined) {
    const fallback = check.name(dirName) ? undefined : dirName;
    if (interactive) name = await ask('Node id ([project] name)', check.name, fallback);
    else if (fallback) name = fallback;
    else needFlag('--name', `the directory name "${basename(dir)}" is not a valid node id`);
  }
  entries.push({ table: 'project', key: 'name', value: name!, flag: '--name' });

  if (versionIsDynamic) {
    let version = options.version ?? (typeof tool.version === 'string' ? tool.version : undefined);
    if (version === undefined) {
      if (interactive)
        version = await ask(
          'Version ([project] version is dynamic, so [tool.nodereg] version)',
          check.version,
          '0.1.0',
        );
      else needFlag('--version', '[project] version is dynamic, so nodereg needs [tool.nodereg] version');
    }
    entries.push({ table: 'tool.nodereg', key: 'version', value: version!, flag: '--version' });
  } else {
    let version = options.version ?? (typeof project.version === 'string' ? project.version : undefined);
    if (version === undefined) version = interactive ? await ask('Version', check.version, '0.1.0') : '0.1.0';
    entries.push({ table: 'project', key: 'version', value: version, flag: '--version' });
  }

  let description = options.description ?? (typeof project.description === 'string' ? project.description : undefined);
  if (description === undefined && interactive && !exists)
    description = await ask('Description (optional)', check.description, undefined, true);
  if (description) entries.push({ table: 'project', key: 'description', value: description, flag: '--description' });

  let publisher = options.publisher ?? (typeof tool.publisher === 'string' ? tool.publisher : undefined);
  if (publisher === undefined && fromComfy('PublisherId') === undefined) {
    if (interactive) publisher = await ask('Publisher id', check.publisher);
    else needFlag('--publisher', 'pyproject.toml needs [tool.nodereg] publisher');
  }
  if (publisher !== undefined)
    entries.push({ table: 'tool.nodereg', key: 'publisher', value: publisher, flag: '--publisher' });

  let displayName =
    options.displayName ?? (typeof tool['display-name'] === 'string' ? tool['display-name'] : undefined);
  if (displayName === undefined && fromComfy('DisplayName') === undefined && interactive)
    displayName = await ask('Display name', check.displayName, name);
  if (displayName && (displayName !== name || tool['display-name'] !== undefined))
    entries.push({ table: 'tool.nodereg', key: 'display-name', value: displayName, flag: '--display-name' });

  let tags: string | string[] | undefined =
    options.tags ?? (Array.isArray(tool.tags) ? (tool.tags as string[]) : undefined);
  if (tags === undefined && interactive)
    tags = await ask('Tags, comma-separated (optional)', check.tags, undefined, true);
  if (typeof tags === 'string') tags = splitTags(tags);
  if (tags?.length) entries.push({ table: 'tool.nodereg', key: 'tags', value: tags, flag: '--tags' });

  if (options.icon) entries.push({ table: 'tool.nodereg', key: 'icon', value: options.icon, flag: '--icon' });
  else fromComfy('Icon');

  // A new file also gets what `comfy node init` writes from the directory, so validate has nothing to warn of that init knew.
  if (!exists) entries.push(...seenInTheDirectory(dir));

  // Flags never overwrite: a key already set to something else is refused, all of them at once.
  const tables: Record<Entry['table'], Record<string, unknown>> = {
    project,
    'project.urls': (project.urls as Record<string, unknown>) ?? {},
    'tool.nodereg': tool,
  };
  const current = (entry: Entry) => tables[entry.table][entry.key];
  const conflicts = entries.filter((e) => current(e) !== undefined && json(current(e)) !== json(e.value));
  if (conflicts.length) {
    const list = conflicts
      .map((e) => `[${e.table}] ${e.key} is ${json(current(e))}, not ${json(e.value)} (${e.flag})`)
      .join('; ');
    throw new CliError(
      `init does not overwrite what pyproject.toml already has: ${list}`,
      EXIT.conflict,
      'conflict',
      'edit pyproject.toml by hand to change them',
    );
  }
  const added = entries.filter((e) => current(e) === undefined);

  const text = added.length ? addKeys(original, added, stringify) : original;
  if (added.length) {
    verify(text, doc, added, parse);
    makeUserDir(dir, 'DIR');
    writeFileSync(file, text);
  }
  const summary = added.map((e) => `[${e.table}] ${e.key}`).join(', ');
  const kept = adopted.length ? `; read as they are: ${adopted.join(', ')}` : '';
  ctx.out.result(
    {
      path: file,
      created: !exists,
      added: Object.fromEntries(added.map((e) => [`${e.table}.${e.key}`, e.value])),
      adopted,
    },
    (added.length
      ? `${exists ? 'added' : 'created'} ${file}${exists ? `: ${summary}` : ''}`
      : `${file} already has everything init sets`) +
      kept +
      seen(added),
  );
  // the commands as the user runs them from here: with the directory they named
  const at = given === undefined ? '' : ` ${shellWord(given)}`;
  ctx.out.hint(`check it with \`nodereg validate${at}\`, then publish with \`nodereg publish${at}\``);
}

/**
 * What `comfy node init` takes from the directory: the root license file, the packages of
 * requirements.txt (without its comments and pip options, which are no packages), and the git
 * remote `origin` as the repository (an SSH remote as its https URL, never a user or token in it).
 */
function seenInTheDirectory(dir: string): Entry[] {
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

/** "; from the directory: [project] license (a LICENSE file), …": the keys no flag or answer gave. */
const seen = (added: Entry[]) => {
  const found = added.filter((e) => !e.flag.startsWith('--')).map((e) => `[${e.table}] ${e.key} (${e.flag})`);
  return found.length ? `; from the directory: ${found.join(', ')}` : '';
};

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

const message = (result: { success: boolean; error?: { issues: { message: string }[] } }) =>
  result.success ? undefined : result.error!.issues.map((i) => i.message).join('; ');

const splitTags = (list: string) =>
  list
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

/**
 * Adds keys to the TOML text without changing a byte of what is there: after a table's header when
 * it has one, else in a new table at the end.
 */
function addKeys(text: string, entries: Entry[], stringify: (value: Record<string, unknown>) => string): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  // a table value as an inline table (`license = { file = "LICENSE" }`): stringify would make it a table of its own
  const line = ({ key, value }: Entry) =>
    Array.isArray(value) || typeof value !== 'object'
      ? stringify({ [key]: value }).trim()
      : `${key} = { ${stringify(value).trim().split(/\r?\n/).join(', ')} }`;
  const lines = (group: Entry[]) => group.map(line).join(eol) + eol;
  let result = text;
  for (const table of ['project', 'project.urls', 'tool.nodereg'] as const) {
    const group = entries.filter((e) => e.table === table);
    if (!group.length) continue;
    const header = new RegExp(
      `^[ \\t]*\\[[ \\t]*${table.split('.').join('[ \\t]*\\.[ \\t]*')}[ \\t]*\\][ \\t]*(#[^\\r\\n]*)?(\\r?\\n|$)`,
      'm',
    ).exec(result);
    if (header) {
      const at = header.index + header[0].length;
      const before = header[2] ? result.slice(0, at) : `${result.slice(0, at)}${eol}`;
      result = before + lines(group) + result.slice(at);
    } else {
      // No header line (the table is new, or only has sub-tables): a header at the end. `verify`
      // refuses the result if TOML does not allow it (an inline table, dotted keys).

      const separator = result === '' ? '' : result.endsWith('\n') ? eol : eol + eol;
      result = `${result}${separator}[${table}]${eol}${lines(group)}`;
    }
  }
  return result;
}

/** The new text must parse to the old document plus exactly the added keys. */
function verify(
  text: string,
  before: Record<string, any>,
  added: Entry[],
  parse: (text: string) => Record<string, any>,
): void {
  let after: Record<string, any>;
  try {
    after = parse(text);
  } catch (error) {
    throw new CliError(
      `init could not add ${added.map((e) => `[${e.table}] ${e.key}`).join(', ')} to pyproject.toml safely (${(error as Error).message.split('\n')[0]}); nothing was written`,
      EXIT.invalid,
      'invalid_input',
      'add them by hand',
    );
  }
  const expected = structuredClone(before);
  for (const entry of added) {
    const project = (expected.project ??= {});
    const table =
      entry.table === 'project'
        ? project
        : entry.table === 'project.urls'
          ? (project.urls ??= {})
          : ((expected.tool ??= {}).nodereg ??= {});
    table[entry.key] = entry.value;
  }
  if (json(sortKeys(after)) !== json(sortKeys(expected))) {
    throw new CliError(
      'init could not add to pyproject.toml without changing what is there; nothing was written',
      EXIT.failure,
      'internal',
      'add the keys by hand',
    );
  }
}

/** JSON of a TOML value; a 64-bit integer (a BigInt) as its digits. */
const json = (value: unknown) =>
  JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
