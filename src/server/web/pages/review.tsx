// The admins' queue: Flagged versions, oldest first, each with its findings, its history (a member's
// request for a re-review shows as its latest entry) and the form to decide it.
import { parseStatusReason } from '../../../contract/status-reason.js';
import type { VersionRow } from '../../store/registry-store.js';
import { CsrfField, Layout, Untrusted, versionHref, type Viewer } from '../layout.js';
import { Findings, History } from './version.js';

export interface QueueItem {
  version: VersionRow;
  publisherId: string;
  requested: boolean;
}

const DecisionForm = ({ viewer, version }: { viewer: Viewer; version: VersionRow }) => {
  const id = version.id;
  return (
    <form class="stack" method="post" action={`/web${versionHref(version.node_id, version.version)}/decision`}>
      <CsrfField viewer={viewer} />
      <label>
        Decision
        <select name="decision" id={`decision-${id}`}>
          <option value="approve">Approve (Active)</option>
          <option value="ask-change">Ask the publisher for a change</option>
          <option value="ban">Ban</option>
        </select>
      </label>
      <label>
        Reason the publisher reads
        <textarea name="message" id={`message-${id}`} required maxlength={2000} rows={3}></textarea>
      </label>
      <button type="submit">Decide</button>
    </form>
  );
};

const Item = ({ viewer, item }: { viewer: Viewer; item: QueueItem }) => {
  const { version } = item;
  const history = parseStatusReason(version.status_reason)?.statusHistory ?? [];
  return (
    <section class="queued">
      <h2>
        <a href={versionHref(version.node_id, version.version)}>
          {version.node_id} {version.version}
        </a>{' '}
        <span class="muted">
          by {item.publisherId}, published {version.created_at.slice(0, 10)}
          {item.requested ? ' · re-review requested' : ''}
        </span>
      </h2>
      {history.length ? (
        <History history={history} />
      ) : (
        <p>
          <Untrusted text={version.status_reason} />
        </p>
      )}
      <Findings findings={version.findings ?? []} />
      <DecisionForm viewer={viewer} version={version} />
    </section>
  );
};

export const ReviewPage = ({ viewer, items }: { viewer: Viewer; items: QueueItem[] }) => (
  <Layout title="Review queue" viewer={viewer}>
    <h1>Review queue</h1>
    <p class="muted">
      {items.length} Flagged {items.length === 1 ? 'version' : 'versions'}, oldest first
    </p>
    {items.map((item) => (
      <Item viewer={viewer} item={item} />
    ))}
  </Layout>
);
