// `nodereg scan --node ID`: the findings the registry already approved for that node (an admin made a
// Flagged version Active), marked in the report, so that a publisher sees which ones will not flag the
// next version and which are new.
import type { ScanReport } from '../contract/scan.js';
import { routes } from '../client/routes.js';
import type { Ctx } from './context.js';

/** Marks each finding whose fingerprint the registry approved for `nodeId` with `approved: true`; returns how many. */
export async function markApproved(ctx: Ctx, report: ScanReport, nodeId: string): Promise<number> {
  const client = await ctx.client({ requireToken: true });
  const { approved } = await client.call(routes.listApprovedFindings, { params: { nodeId } });
  const fingerprints = new Set(approved.map((a) => a.fingerprint));
  let marked = 0;
  for (const finding of report.findings) {
    if (finding.fingerprint && fingerprints.has(finding.fingerprint)) {
      finding.approved = true;
      marked++;
    }
  }
  report.approved = marked;
  return marked;
}
