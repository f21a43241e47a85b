// The scanner's tuning and the words it writes about files it did not parse (DESIGN.md §10). Not wire
// rules: the severities and rule ids findings carry are in src/contract/limits.ts.

const MiB = 1024 * 1024;

/** `nodereg scan --fail-on` and `publish`/`validate` stop at findings of this severity or above by default. */
export const DEFAULT_SCAN_FAIL_ON = 'high';
/** `serve --scan`: flag versions with high findings, only keep findings (warn), or do not scan (off). */
export const SCAN_MODES = ['flag', 'warn', 'off'] as const;
/** On the server, unsuppressed findings at or above this severity flag a version (and cannot be suppressed). */
export const SCAN_FLAG_AT = 'high';
/** Files larger than this are not parsed; they are listed as skipped. */
export const SCAN_MAX_FILE_BYTES = 4 * MiB;
/**
 * A file not parsed up to this size is still read for the names the rules look for (the text gate, a
 * few ms per MiB): one that names none has no findings; one that does flags the version for review on
 * the registry (and counts as a finding locally), as does a larger one (it is not read at all).
 */
export const SCAN_GATE_MAX_BYTES = 64 * MiB;
/**
 * A file's parse may take this many work units; past it the file is treated as one too large to parse.
 * A unit is one report of the parser's progress (every ~100 steps of its work), counted 4 times once the
 * parse has met a syntax error: error recovery costs more per step. Plain Python takes ~7 units per KiB
 * (4 MiB: ~29,000), random brackets ~180 weighted units per KiB (so ~220 KiB of them reach the limit).
 * Counted, not timed, so that a loaded machine decides as an idle one does.
 */
export const SCAN_PARSE_UNITS = 40_000;
/** The parses of one scan take at most this many work units in all (the bench's 2,000-file tree: ~200,000). */
export const SCAN_BUDGET_UNITS = 400_000;
/**
 * The last guard, in wall time, behind the work units: a file's parse may run this long; past it the
 * file is treated as one too large to parse.
 * Plain code parses at 2 MB/s or more (4 MiB: ~2 s at load 4 on the 2-core benchmark machine; wall time
 * grows with the load, so 10× that), garbage at 0.1–0.3 MB/s (4 MiB of random brackets: ~45 s), so an
 * archive of such files held a worker for minutes.
 */
export const SCAN_PARSE_MS = 120_000;
/**
 * The last guard behind SCAN_BUDGET_UNITS: the files of one scan (an upload's, or `nodereg scan`'s) are parsed until this long after it began;
 * the ones left are read for names only, as a file too large to parse. The 2,000-file bench tree,
 * every file parsed, takes ~5–10 s of CPU (24 s of wall time at load 8).
 */
export const SCAN_BUDGET_MS = 300_000;
/** A limit in time as the scan's messages give it: "1 ms", "30 s". */
export const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);
/** Why a file was not parsed (SkippedFile.reason; a Flagged version's status_reason quotes it). */
export const notParsed = {
  size: (size: number) => `${size} bytes, over the limit of ${SCAN_MAX_FILE_BYTES} bytes per file`,
  parse: (ms: number) => `its parse took longer than ${seconds(ms)}, the limit per file`,
  budget: (ms: number) => `the scan had run ${seconds(ms)}, its limit, before this file was parsed`,
  units: (units: number) => `its parse took more than ${units} work units, the limit per file`,
  budgetUnits: (units: number) => `the scan had used ${units} work units, its limit, before this file was parsed`,
};
/** "what dynamic-execution, command-injection look for" (the rules whose names a file not parsed holds). */
export const namesWhat = (rules: readonly string[]) =>
  `what ${rules.join(', ')} ${rules.length > 1 ? 'look' : 'looks'} for`;
/** Why a compiled Python file is not scanned (unscannedFlag's reason). */
export const COMPILED_PYTHON = 'compiled Python: Python may run it in place of its source, and no rule can read it';
/** The registry's status_reason for a file not parsed that may hide a finding at SCAN_FLAG_AT (`rules` unknown: not read at all). */
export const unscannedFlag = (file: string, reason: string, rules?: readonly string[]) =>
  `scan: could not scan ${file} (${reason})${rules ? `, which names ${namesWhat(rules)}` : ''}; an admin must review it`.slice(
    0,
    1000,
  );
/**
 * The scan lists at most this many findings of one rule in one file, then stops looking for that rule
 * there: a file of 270,000 `eval(x)` lines cost 1.3 GB and 8 s in the CLI, and ran the registry's worker
 * out of memory. One finding already decides; the rest add nothing a reader can act on.
 */
export const SCAN_MAX_FINDINGS_PER_RULE = 100;
/** A scan report lists at most this many findings, the most severe first; it counts the others (`omitted`). */
export const SCAN_MAX_REPORTED_FINDINGS = 1000;
