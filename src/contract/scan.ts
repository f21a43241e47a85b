// The scanner's findings as they travel: `nodereg scan --json`, and the `findings` extension of a
// NodeVersion that the registry shows to the node's publisher members and admins (DESIGN.md §10).
import * as z from 'zod';
import { SCAN_RULE_IDS, SCAN_SEVERITIES } from './limits.js';

export type ScanSeverity = (typeof SCAN_SEVERITIES)[number];
export type ScanRuleId = (typeof SCAN_RULE_IDS)[number];

export const Finding = z.looseObject({
  rule: z.enum(SCAN_RULE_IDS),
  severity: z.enum(SCAN_SEVERITIES),
  /** Relative to the node's root (the archive name), `/`-separated. */
  file: z.string(),
  /** 1-based. */
  line: z.number().int(),
  /** 1-based. */
  column: z.number().int(),
  message: z.string(),
  hint: z.string(),
  /** Present and true when a `# nodereg: allow RULE -- reason` comment covers the finding. */
  suppressed: z.boolean().optional(),
  /** The reason written in that comment (on the server also for high findings, which stay unsuppressed). */
  reason: z.string().optional(),
  /**
   * The same for the same finding from one version to the next: its rule, its code with names of
   * variables and whitespace taken out, and the function it is in; not its line.
   */
  fingerprint: z.string().optional(),
  /** `nodereg scan --node ID`: true when the registry already approved this finding for that node. */
  approved: z.boolean().optional(),
});
export type Finding = z.infer<typeof Finding>;

/**
 * A file the scanner did not parse (too large, or its parse ran out of time), and why; listed only when
 * its text names what a rule looks for, or could not be read at all.
 */
export const SkippedFile = z.object({
  file: z.string(),
  reason: z.string(),
  /** The rules whose names its text holds, when it was read for them: it may hold their findings. */
  rules: z.array(z.enum(SCAN_RULE_IDS)).optional(),
  /**
   * The most severe of those rules (SCAN_FLAG_AT when it could not be read): a registry flags the
   * version for review at SCAN_FLAG_AT, and --fail-on counts it as a finding of this severity.
   */
  severity: z.enum(SCAN_SEVERITIES),
});
export type SkippedFile = z.infer<typeof SkippedFile>;

/** `nodereg scan --json`. */
export const ScanReport = z.object({
  findings: z.array(Finding),
  /** Files in the set that was scanned (what `pack` would ship). */
  files: z.number().int(),
  /** How many findings a suppression comment covers. */
  suppressed: z.number().int(),
  skipped: z.array(SkippedFile).optional(),
  /** Findings found but not listed: past SCAN_MAX_REPORTED_FINDINGS (the most severe are listed). */
  omitted: z.number().int().optional(),
  /** Where the scan stopped looking for a rule after SCAN_MAX_FINDINGS_PER_RULE findings of it: there may be more. */
  stopped: z.array(z.object({ file: z.string(), rule: z.enum(SCAN_RULE_IDS) })).optional(),
  /** `nodereg scan --node ID`: how many findings the registry already approved for that node. */
  approved: z.number().int().optional(),
});
export type ScanReport = z.infer<typeof ScanReport>;

/** A finding an admin approved for a node: a later version with only approved high findings is not flagged for them. */
export const ApprovedFinding = z.looseObject({
  fingerprint: z.string(),
  rule: z.string(),
  /** The version whose approval approved it; null once that version is gone. */
  version: z.string().nullable(),
  approved_at: z.string(),
});
/** `GET /nodes/{nodeId}/approved-findings`, for the node's publisher members and admins. */
export const ApprovedFindings = z.looseObject({ approved: z.array(ApprovedFinding) });
export type ApprovedFindings = z.infer<typeof ApprovedFindings>;
