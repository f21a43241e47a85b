// Shared bits of human output for the registry commands: statuses, lists, yes/no.
import type { Me, NodeVersion } from '../contract/resources.js';
import { relativeTime, table, type Output } from './output.js';

/** `NodeVersionStatusActive` → `active`: the word a user reads and types. */
export function shortStatus(status: string | undefined): string {
  return status ? status.replace(/^(?:NodeVersion|Node|Publisher)Status/, '').toLowerCase() : '-';
}

/** The wire value for a short status word among `all` (e.g. NODE_STATUS). */
export function fullStatus(all: readonly string[], word: string): string {
  const found = all.find((s) => shortStatus(s) === word.toLowerCase());
  if (!found) throw new Error(`unknown status ${word}`); // choices() has already refused it
  return found;
}

type Colour = Parameters<Output['style']>[0];
const COLOURS: Record<string, Colour> = {
  active: 'green',
  pending: 'yellow',
  flagged: 'magenta',
  banned: 'red',
  deleted: 'gray',
};

/** A status as a short coloured word (colour only on a terminal, never with NO_COLOR). */
export function statusText(out: Output, status: string | undefined): string {
  const word = shortStatus(status);
  const colour = COLOURS[word];
  return colour ? out.style(colour, word) : word;
}

/** `a, b` or `-`. */
export function listText(values: readonly string[] | undefined): string {
  return values?.length ? values.join(', ') : '-';
}

/** Label/value lines, labels padded: the body of a `show` command. A value's further lines (a description) are indented under its first, so they never read as fields. */
export function fields(rows: [string, string | number | undefined | null][]): string {
  const shown = rows.filter(([, value]) => value !== undefined && value !== null && value !== '');
  const width = Math.max(...shown.map(([label]) => label.length));
  const indent = ' '.repeat(width + 2);
  return shown
    .map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${String(value).replace(/\n/g, `\n${indent}`)}`)
    .join('\n');
}

/** Versions as a table: the status reason is the last column, since it is free text. */
export function versionTable(out: Output, versions: NodeVersion[]): string {
  if (versions.length === 0) return 'no versions yet';
  const rows = versions.map((v) => [
    // signed provenance (published from a trusted CI workflow): `nodereg verify` checks it
    v.has_provenance ? `${v.version} ${out.style('green', '(provenance)')}` : v.version,
    statusText(out, v.status),
    v.deprecated ? out.style('yellow', 'deprecated') : '-',
    relativeTime(v.createdAt),
    // A version whose upload never finished is pending too: tell it from one awaiting review.
    v.status_reason || (v.status === 'NodeVersionStatusPending' && !v.archive_sha256 ? 'no archive uploaded yet' : ''),
  ]);
  return table(rows, ['VERSION', 'STATUS', 'DEPRECATED', 'CREATED', 'REASON']);
}

/** One line saying whom a token belongs to, from `GET /users/me`. */
export function describeMe(me: Me): string {
  if (me.kind === 'pat') {
    return `access token "${me.token.name}" (${me.token.id}) of publisher ${me.publisher.id}, created by ${me.user.name} (${me.user.id})`;
  }
  return `${me.user.name} (${me.user.id}${me.user.email ? `, ${me.user.email}` : ''})${me.user.admin ? ', admin' : ''}`;
}

/** The registry scan's findings of each version that has any (`node versions --reasons`). */
export function versionFindings(out: Output, versions: NodeVersion[]): string {
  const blocks = versions
    .filter((v) => v.findings?.length)
    .map((v) => {
      const lines = v.findings!.map((f) => {
        const note = f.suppressed ? ` (suppressed: ${f.reason})` : f.reason ? ` (reason given: ${f.reason})` : '';
        return `  ${f.file}:${f.line}  ${out.style(f.severity === 'high' || f.severity === 'critical' ? 'red' : 'yellow', f.severity)}  ${f.rule}  ${f.message}${note}`;
      });
      return `${v.version}\n${lines.join('\n')}`;
    });
  return blocks.length
    ? `\n\n${blocks.join('\n\n')}`
    : "\n\nno scan findings to show (none, or they are shown only to the publisher's members and admins)";
}
