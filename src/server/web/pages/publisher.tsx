// A publisher: its description, its nodes and its members (names and roles; never e-mails).
import type { MemberRow, NodeRow, PublisherRow } from '../../store/registry-store.js';
import { Layout, nodeHref, OutLink, Untrusted, type Viewer } from '../layout.js';

export const PublisherPage = ({
  viewer,
  publisher,
  nodes,
  members,
}: {
  viewer: Viewer | null;
  publisher: PublisherRow;
  nodes: NodeRow[];
  members: MemberRow[];
}) => (
  <Layout title={publisher.name || publisher.id} viewer={viewer}>
    <h1>
      <Untrusted text={publisher.name || publisher.id} />
    </h1>
    <p class="muted">
      {publisher.id}
      {publisher.status === 'PublisherStatusBanned' ? ' · banned' : ''}
    </p>
    <p>
      <Untrusted text={publisher.description} />
    </p>
    <dl>
      <dt>Source</dt>
      <dd>
        <OutLink url={publisher.source_code_repo} />
      </dd>
    </dl>
    <h2>Nodes</h2>
    {nodes.length ? (
      <ul>
        {nodes.map((node) => (
          <li>
            <a href={nodeHref(node.id)}>
              <Untrusted text={node.name || node.id} />
            </a>{' '}
            <span class="muted">{node.id}</span>
          </li>
        ))}
      </ul>
    ) : (
      <p class="muted">No nodes.</p>
    )}
    <h2>Members</h2>
    <ul>
      {members.map((member) => (
        <li>
          <Untrusted text={member.user.name} /> <span class="muted">({member.role})</span>
        </li>
      ))}
    </ul>
  </Layout>
);
