import { writeFileSync } from 'node:fs';
import type { Ctx } from '../../context.js';
import { CliError, EXIT } from '../../errors.js';
import { shellWord } from '../../invocation.js';
import { makeUserDir } from '../../make-dir.js';
import { addKeys, json, verify } from './edit.js';
import type { Entry } from './entry.js';
import { parseToml, stringifyToml, type Pyproject } from './read.js';

/** The entries pyproject.toml does not have yet. Flags never overwrite: a key already set to something else is refused, all of them at once. */
export function newEntries({ project, tool }: Pyproject, entries: Entry[]): Entry[] {
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
  return entries.filter((e) => current(e) === undefined);
}

/** Writes the added keys (nothing when there are none), then says what changed and what to run next. */
export function writeAndReport(
  ctx: Ctx,
  dir: string,
  { file, exists, original, doc }: Pyproject,
  added: Entry[],
  adopted: string[],
  given: string | undefined,
): void {
  const text = added.length ? addKeys(original, added, stringifyToml) : original;
  if (added.length) {
    verify(text, doc, added, parseToml);
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

/** "; from the directory: [project] license (a LICENSE file), …": the keys no flag or answer gave. */
const seen = (added: Entry[]) => {
  const found = added.filter((e) => !e.flag.startsWith('--')).map((e) => `[${e.table}] ${e.key} (${e.flag})`);
  return found.length ? `; from the directory: ${found.join(', ')}` : '';
};
