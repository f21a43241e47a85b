// A version: its status and one-line reason for everyone; its scan findings, grouped by file, for its
// publisher's members and admins; the history of decisions; and the forms of the review flow.
import type { Finding } from '../../../contract/scan.js';
import type { StatusHistoryEntry } from '../../../contract/status-reason.js';
import type { NodeRow, VersionRow } from '../../store/registry-store.js';
import { CsrfField, Layout, nodeHref, Status, Untrusted, versionHref, type Viewer } from '../layout.js';

export interface VersionPageData {
  node: NodeRow;
  version: VersionRow;
  /** The one-line reason (the latest decision's message, or the scan's line). */
  reason: string;
  history: StatusHistoryEntry[];
  /** Findings when the viewer is a member of the publisher or an admin; undefined otherwise. */
  findings?: Finding[];
  /** The viewer may ask for a re-review (a member, the version Flagged). */
  canAppeal: boolean;
}

export function byFile(findings: Finding[]): [string, Finding[]][] {
  const files = new Map<string, Finding[]>();
  for (const finding of findings) files.set(finding.file, [...(files.get(finding.file) ?? []), finding]);
  return [...files.entries()];
}

export const Findings = ({ findings }: { findings: Finding[] }) =>
  findings.length ? (
    <>
      {byFile(findings).map(([file, list]) => (
        <section class="file">
          <h3>
            <code>
              <Untrusted text={file} />
            </code>
          </h3>
          <table>
            <thead>
              <tr>
                <th scope="col">Line</th>
                <th scope="col">Rule</th>
                <th scope="col">Severity</th>
                <th scope="col">What and how to fix it</th>
              </tr>
            </thead>
            <tbody>
              {list.map((finding) => (
                <tr class="finding">
                  <td>{finding.line}</td>
                  <td>
                    <code>{finding.rule}</code>
                  </td>
                  <td class={`severity-${finding.severity}`}>{finding.severity}</td>
                  <td>
                    <Untrusted text={finding.message} />
                    <br />
                    <span class="muted">
                      <Untrusted text={finding.hint} />
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}
    </>
  ) : (
    <p class="muted">The scan found nothing.</p>
  );

export const History = ({ history }: { history: StatusHistoryEntry[] }) =>
  history.length ? (
    <ol class="history">
      {history.map((entry) => (
        <li>
          <Status status={entry.status} /> — <Untrusted text={entry.message} />{' '}
          <span class="muted">
            {entry.by ? (
              <>
                by <Untrusted text={entry.by} />
              </>
            ) : null}
            {entry.at ? `, ${entry.at.slice(0, 16).replace('T', ' ')} UTC` : ''}
          </span>
        </li>
      ))}
    </ol>
  ) : (
    <p class="muted">No decisions yet.</p>
  );

const AppealForm = ({ viewer, data }: { viewer: Viewer; data: VersionPageData }) => (
  <form class="stack" method="post" action={`/web${versionHref(data.node.id, data.version.version)}/appeal`}>
    <CsrfField viewer={viewer} />
    <label>
      Message to the reviewers
      <textarea name="message" id="appeal-message" required maxlength={2000} rows={4}></textarea>
    </label>
    <button type="submit">Ask for a re-review</button>
  </form>
);

export const VersionPage = ({ viewer, data }: { viewer: Viewer | null; data: VersionPageData }) => {
  const { node, version } = data;
  return (
    <Layout title={`${node.name || node.id} ${version.version}`} viewer={viewer}>
      <h1>
        <a href={nodeHref(node.id)}>
          <Untrusted text={node.name || node.id} />
        </a>{' '}
        {version.version}
      </h1>
      <p>
        Status: <Status status={version.status} />
        {data.reason ? (
          <>
            {' — '}
            <span id="status-reason">
              <Untrusted text={data.reason} />
            </span>
          </>
        ) : null}
      </p>
      {version.changelog ? (
        <p>
          <Untrusted text={version.changelog} />
        </p>
      ) : null}
      <h2>History</h2>
      <History history={data.history} />
      {data.findings ? (
        <>
          <h2>Findings</h2>
          <Findings findings={data.findings} />
        </>
      ) : null}
      {viewer && data.canAppeal ? (
        <>
          <h2>Ask for a re-review</h2>
          <AppealForm viewer={viewer} data={data} />
        </>
      ) : null}
    </Layout>
  );
};
