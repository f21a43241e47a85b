// SARIF 2.1.0 for code-scanning tools: one run, tool "nodereg" with every rule described, one result
// per finding (suppressed ones carry a suppression with the reason written in the code).
import type { Finding, ScanSeverity } from '../contract/scan.js';
import { rules } from './rules/index.js';

const LEVEL: Record<ScanSeverity, 'note' | 'warning' | 'error'> = {
  info: 'note',
  low: 'note',
  medium: 'warning',
  high: 'error',
  critical: 'error',
};

/** Security severities as code-scanning tools read them (0.1–10). */
const SECURITY_SEVERITY: Record<ScanSeverity, string> = {
  info: '0.1',
  low: '2.0',
  medium: '5.0',
  high: '8.0',
  critical: '9.5',
};

export function toSarif(findings: readonly Finding[], version: string): object {
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'nodereg',
            version,
            rules: rules.map((rule) => ({
              id: rule.id,
              name: rule.id,
              shortDescription: { text: rule.description },
              fullDescription: { text: rule.description },
              help: { text: rule.hint },
              defaultConfiguration: { level: LEVEL[rule.severity] },
              properties: {
                'security-severity': SECURITY_SEVERITY[rule.severity],
                tags: ['security'],
                severity: rule.severity,
              },
            })),
          },
        },
        columnKind: 'utf16CodeUnits',
        results: findings.map((finding) => ({
          ruleId: finding.rule,
          ruleIndex: rules.findIndex((rule) => rule.id === finding.rule),
          level: LEVEL[finding.severity],
          message: { text: `${finding.message}. ${finding.hint}` },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: encodeURI(finding.file), uriBaseId: '%SRCROOT%' },
                region: { startLine: finding.line, startColumn: finding.column },
              },
            },
          ],
          ...(finding.suppressed ? { suppressions: [{ kind: 'inSource', justification: finding.reason ?? '' }] } : {}),
        })),
      },
    ],
  };
}
