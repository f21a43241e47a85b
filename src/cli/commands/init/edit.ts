import { CliError, EXIT } from '../../errors.js';
import type { Entry } from './entry.js';

/**
 * Adds keys to the TOML text without changing a byte of what is there: after a table's header when
 * it has one, else in a new table at the end.
 */
export function addKeys(text: string, entries: Entry[], stringify: (value: Record<string, unknown>) => string): string {
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
export function verify(
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
export const json = (value: unknown) =>
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
