// Exit codes and what each means: no imports, so `nodereg --help` and the CLI's end load nothing more.
/** Exit codes of DESIGN.md §5. */
export const EXIT = {
  ok: 0,
  failure: 1,
  invalid: 2,
  conflict: 3,
  auth: 4,
  notFound: 5,
  /** Ctrl-C (SIGINT), and SIGTERM below: 128 + the signal's number, as a shell reports a process the signal ended. */
  interrupted: 130,
  terminated: 143,
} as const;

type ExitCode = (typeof EXIT)[keyof typeof EXIT];
/** The commands whose `--help` says what each exit code means for them. */
export type ExplainedCommand = 'publish' | 'scan' | 'restore';
type ExitMeaning = { code: ExitCode; name: string; when?: string } & Partial<Record<ExplainedCommand, string>>;

/**
 * What each exit code means, in general (`name`, `when`) and for the commands that say more: the one
 * source of the "Exit codes" of `nodereg --help`, `publish`, `scan` and `restore --help`, and of
 * the exit-code table of docs/configuration.md and the scan and restore lines of docs/scan.md and
 * docs/postgres-s3.md (test/cli/exit-codes.test.ts holds the docs to it).
 * Markdown: a terminal gets the text without its backticks.
 */
export const EXIT_MEANINGS: readonly ExitMeaning[] = [
  {
    code: EXIT.ok,
    name: 'success',
    publish: 'published; or, with `--skip-existing`, the same archive was already published',
    scan: 'no unsuppressed finding, nor file it could not scan, at or above `--fail-on`',
    restore: 'restored',
  },
  {
    code: EXIT.failure,
    name: 'failure',
    when: 'server error (5xx), rate limited (429), network; `scan`: a finding (or a file it could not scan) at or above `--fail-on`',
    publish:
      'the registry could not be reached or failed (5xx, 429), also after retries; or `GITHUB_OUTPUT` could not be written (the version is published)',
    scan: 'at least one',
    restore: 'an archive that does not match its version, or the database or bucket failed',
  },
  {
    code: EXIT.invalid,
    name: 'invalid input',
    when: 'bad flags, local validation, server 400, 413, 415, a registry URL that answers as no registry does (another server, a wrong path); `validate`, `publish`: scan findings at or above `--fail-on`, and a version the registry flagged after its upload',
    publish:
      "invalid project or flags; the local scan found something at or above `--fail-on`; or the registry flagged the version after its upload (nobody can install it); or the registry URL is not a registry's",
    scan: 'bad flags or an unreadable project',
    restore: 'SOURCE is not a nodereg data dir, or a bad URL',
  },
  {
    code: EXIT.conflict,
    name: 'conflict',
    when: '409, e.g. the version exists (`publish --skip-existing`: with another archive, or withdrawn)',
    publish: 'the version exists (with `--skip-existing`: with another archive, or withdrawn)',
    restore: 'the target holds a registry, or a running server holds SOURCE',
  },
  {
    code: EXIT.auth,
    name: 'not authenticated or not allowed',
    when: '401, 403',
    publish: 'no token, or the registry refused it; or another publisher holds the node id',
  },
  { code: EXIT.notFound, name: 'not found', when: '404', publish: 'the publisher does not exist' },
  {
    code: EXIT.interrupted,
    name: 'interrupted',
    when: 'Ctrl-C (SIGINT); `serve` stops gracefully on it and exits 0',
    publish: 'interrupted by Ctrl-C (SIGINT)',
  },
  {
    code: EXIT.terminated,
    name: 'terminated',
    when: 'SIGTERM, e.g. a cancelled CI job; `serve` stops gracefully on it and exits 0',
    publish: 'terminated by SIGTERM (e.g. a cancelled CI job)',
  },
];

/** `lead` and `parts` joined by `joint`, in lines of at most 88 columns indented as far as `lead`; without backticks. */
function wrapped(lead: string, parts: string[], joint: string): string {
  const lines: string[] = [];
  let line = lead;
  for (const part of parts.map((p) => p.replaceAll('`', ''))) {
    if (line.length > lead.length && line.length + joint.length + part.length > 88) {
      lines.push(line.trimEnd());
      line = ' '.repeat(lead.length) + part;
    } else line += (line.length > lead.length ? joint : '') + part;
  }
  return [...lines, line].join('\n');
}

/** The "Exit codes:" of `nodereg --help` (no `command`: every code by name) or of a command's `--help`. */
export function exitCodesHelp(command?: ExplainedCommand): string {
  if (!command)
    return `Exit codes:\n${wrapped(
      '  ',
      EXIT_MEANINGS.map((m) => `${m.code} ${m.name}`),
      ' · ',
    )}`;
  const lines = EXIT_MEANINGS.filter((m) => m[command]).map((m) =>
    wrapped(`  ${String(m.code).padEnd(5)}`, m[command]!.split(' '), ' '),
  );
  return `\nExit codes:\n${lines.join('\n')}`;
}

/** The exit code of a run a signal stopped: 130 for SIGINT, 143 for SIGTERM, whichever step it stopped. */
export const exitCodeForSignal = (signal: unknown): number =>
  signal === 'SIGTERM' ? EXIT.terminated : EXIT.interrupted;
