// What scan, validate and publish share about scan findings: running the scanner on the project's
// file set, the human listing (grouped by file, with the line of code), and the --fail-on decision.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { atLeast, SCAN_SEVERITIES } from '../contract/limits.js';
import {
  COMPILED_PYTHON,
  DEFAULT_SCAN_FAIL_ON,
  namesWhat,
  SCAN_FLAG_AT,
  SCAN_MAX_FINDINGS_PER_RULE,
  SCAN_MAX_REPORTED_FINDINGS,
} from '../shared/scan.js';
import type { Finding, ScanReport, ScanSeverity, SkippedFile } from '../contract/scan.js';
import type { Problem } from '../package/manifest.js';
import type { Project } from '../package/project.js';
import { CliError, EXIT } from './errors.js';
import type { Output } from './output.js';

/** `--fail-on`, made through the program: this module loads no commander (publish runs without it). */
export const failOnOption = (program: Command) =>
  program
    .createOption('--fail-on <severity>', 'findings of this severity or above stop it')
    .choices(SCAN_SEVERITIES)
    .default(DEFAULT_SCAN_FAIL_ON);

/**
 * Scans the files `pack` would ship. `asRegistry` (validate, publish): a suppression comment hides no
 * finding at SCAN_FLAG_AT, as on the registry, which would flag the version anyway. `cache`: keep the
 * files' scans between runs under the user's cache (`nodereg scan`).
 */
export async function scanProject(
  project: Pick<Project, 'files'>,
  asRegistry = false,
  cache?: { root: string; env: NodeJS.ProcessEnv },
): Promise<ScanReport> {
  const { scanFiles } = await import('../scan/run.js');
  const file = cache && (await import('../scan/cache.js')).cacheFileFor(cache.root, cache.env);
  return scanFiles(project.files, { server: asRegistry, cache: file });
}

/**
 * Unsuppressed findings at or above `failOn`, and the files not scanned that are (by the most severe
 * rule whose names they hold): a registry flags those at SCAN_FLAG_AT, so they count like findings.
 */
export function blocking(report: ScanReport, failOn: ScanSeverity): (Finding | SkippedFile)[] {
  return [
    ...report.findings.filter((f) => !f.suppressed && atLeast(f.severity, failOn)),
    ...(report.skipped ?? []).filter((s) => atLeast(s.severity, failOn)),
  ];
}

/** "not scanned (…); it names what dynamic-execution looks for, so a registry flags the version for review". */
export function unscannedText(skipped: SkippedFile): string {
  const names = skipped.rules
    ? `; it names ${namesWhat(skipped.rules)}`
    : skipped.reason === COMPILED_PYTHON
      ? ''
      : '; it is too large to be read for what the rules look for';
  return `not scanned (${skipped.reason})${names}${atLeast(skipped.severity, SCAN_FLAG_AT) ? ', so a registry flags the version for review' : ''}`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "2 findings (1 high, 1 medium) in 12 files, 1 suppressed". */
export function findingsSummary(report: ScanReport): string {
  const shown = report.findings.filter((f) => !f.suppressed);
  const counts = [...SCAN_SEVERITIES]
    .reverse()
    .map((s) => [s, shown.filter((f) => f.severity === s).length] as const)
    .filter(([, n]) => n);
  const by = counts.length ? ` (${counts.map(([s, n]) => `${n} ${s}`).join(', ')})` : '';
  const unhidden = report.findings.filter((f) => f.suppressed && atLeast(f.severity, SCAN_FLAG_AT)).length;
  const flaggedAnyway = unhidden
    ? ` (a registry flags ${unhidden === report.suppressed ? (unhidden === 1 ? 'it' : 'them') : unhidden} anyway: a comment hides no ${SCAN_FLAG_AT} or more severe finding there)`
    : '';
  const suppressed = report.suppressed ? `, ${report.suppressed} suppressed${flaggedAnyway}` : '';
  const more = report.omitted
    ? `, and ${report.omitted} more not listed (the ${SCAN_MAX_REPORTED_FINDINGS} most severe are)`
    : '';
  const unscanned = report.skipped?.length ? `, ${plural(report.skipped.length, 'file')} not scanned` : '';
  const approved = report.approved !== undefined ? `, ${report.approved} approved by the registry` : '';
  return `${shown.length ? plural(shown.length, 'finding') : 'no findings'}${by} in ${plural(report.files, 'file')}${approved}${suppressed}${unscanned}${more}`;
}

/** "many.py: the scan stopped looking for dynamic-execution after 100 findings; there may be more". */
const stoppedLines = (report: ScanReport) =>
  (report.stopped ?? []).map(
    ({ file, rule }) =>
      `${file}: the scan stopped looking for ${rule} after ${SCAN_MAX_FINDINGS_PER_RULE} findings; there may be more`,
  );

const SEVERITY_COLOUR: Record<ScanSeverity, Parameters<Output['style']>[0]> = {
  info: 'gray',
  low: 'cyan',
  medium: 'yellow',
  high: 'red',
  critical: 'magenta',
};

/** Unsuppressed findings grouped by file, each with its line of code; `root` is where the files are. */
export function findingsText(out: Output, report: ScanReport, files: Pick<Project, 'files'>['files']): string {
  const where = new Map(files.map((f) => [f.path, f.abs]));
  const lines = new Map<string, string[]>();
  const codeLine = (file: string, line: number) => {
    if (!lines.has(file)) {
      let text = '';
      try {
        text = readFileSync(where.get(file) ?? '', 'utf8');
      } catch {
        // the file went away since the scan: no line to show
      }
      lines.set(file, text.split(/\r\n|\r|\n/)); // lines as the scan counts them (asRead)
    }
    return (lines.get(file)![line - 1] ?? '').trim().slice(0, 160);
  };
  const parts: string[] = [];
  let current = '';
  for (const f of report.findings.filter((x) => !x.suppressed)) {
    if (f.file !== current) {
      current = f.file;
      parts.push(`${parts.length ? '\n' : ''}${out.style('underline', f.file)}`);
    }
    parts.push(
      `  ${f.line}:${f.column}  ${out.style(SEVERITY_COLOUR[f.severity], f.severity.padEnd(8))}  ${f.rule}  ${f.message}${f.approved ? out.style('dim', '  (approved by the registry)') : ''}`,
    );
    parts.push(`      ${out.style('dim', '|')} ${codeLine(f.file, f.line)}`);
    parts.push(`      ${out.style('dim', `hint: ${f.hint}`)}`);
  }
  for (const skipped of report.skipped ?? []) parts.push(`${skipped.file}: ${unscannedText(skipped)}`);
  parts.push(...stoppedLines(report));
  parts.push(`${parts.length ? '\n' : ''}${findingsSummary(report)}`);
  return parts.join('\n');
}

/** The error lists this many findings, and counts the others (`nodereg scan` lists them). */
const ERROR_LISTS = 20;

/** Findings at --fail-on as problems of the project, listed with its manifest's (validate names every problem at once). */
export const findingProblems = (stopping: (Finding | SkippedFile)[]): Problem[] =>
  stopping.slice(0, ERROR_LISTS).map((f) => ({
    key: `scan ${f.file}${'rule' in f ? `:${f.line}` : ''}`,
    message: 'rule' in f ? `${f.severity} ${f.rule}: ${f.message}; ${f.hint}` : `${f.severity} ${unscannedText(f)}`,
  }));

/** The error of validate and publish when findings reach --fail-on. */
export function findingsError(
  stopping: (Finding | SkippedFile)[],
  failOn: ScanSeverity,
  acceptFlag: boolean,
): CliError {
  const list = stopping
    .slice(0, ERROR_LISTS)
    .map((f) =>
      'rule' in f
        ? `  ${f.file}:${f.line}  ${f.severity}  ${f.rule}: ${f.message}`
        : `  ${f.file}  ${f.severity}  ${unscannedText(f)}`,
    )
    .concat(
      stopping.length > ERROR_LISTS
        ? [`  and ${stopping.length - ERROR_LISTS} more (\`nodereg scan\` lists every one)`]
        : [],
    )
    .join('\n');
  const findings = stopping.filter((f): f is Finding => 'rule' in f);
  const unscanned = stopping.length - findings.length;
  const found = [
    findings.length ? plural(findings.length, 'finding') : '',
    unscanned ? `${plural(unscanned, 'file')} it could not scan` : '',
  ];
  const flagged = stopping.some((f) => atLeast(f.severity, SCAN_FLAG_AT));
  // the findings' own hints say what to do; a comment is no way past a finding the registry flags
  const hints = [...new Set(findings.map((f) => f.hint))].slice(0, 3);
  const fixes = [
    findings.length ? `fix ${findings.length === 1 ? 'it' : 'them'}: ${hints.join('; ')}` : '',
    findings.length && flagged
      ? `a \`# nodereg: allow RULE -- reason\` comment does not keep a registry from flagging a ${SCAN_FLAG_AT} or more severe finding`
      : '',
    findings.length && !flagged ? 'or mark a safe line with `# nodereg: allow RULE -- reason`' : '',
    unscanned ? 'make a file it could not scan smaller or plainer, or leave it out' : '',
  ];
  const accept = acceptFlag
    ? `; or publish anyway with --accept-findings${flagged ? ' (the registry flags the version: nobody can install it until an admin reviews it)' : ''}`
    : '';
  const error = new CliError(
    `the scan found ${found.filter(Boolean).join(' and ')} at or above ${failOn}:\n${list}`,
    EXIT.invalid,
    'scan_findings',
    `${fixes.filter(Boolean).join('; ')}${accept}; \`nodereg scan\` shows each with its line`,
  );
  // every one, as objects as `scan --json` lists them: the message lists ERROR_LISTS for a reader
  error.fields = { findings, skipped: stopping.filter((f): f is SkippedFile => !('rule' in f)) };
  return error;
}
