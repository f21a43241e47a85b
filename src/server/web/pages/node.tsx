// A node: description, repository, license, the install commands, its versions with status and date,
// the node classes of its latest version, and its rating.
import type { Node } from '../../../contract/resources.js';
import type { NodeClassRow } from '../../store/node-classes.js';
import type { VersionRow } from '../../store/registry-store.js';
import { Layout, OutLink, publisherHref, Status, Untrusted, versionHref, type Viewer } from '../layout.js';

export interface NodePageData {
  node: Node;
  versions: VersionRow[];
  classes: NodeClassRow[];
  registryUrl: string;
}

const day = (iso: string | null | undefined) => (iso ? iso.slice(0, 10) : '');

const Command = ({ id, text }: { id: string; text: string }) => (
  <div class="command">
    <code id={id}>{text}</code>
    <button type="button" class="plain" data-copy={id} hidden>
      Copy
    </button>
  </div>
);

const Versions = ({ nodeId, versions }: { nodeId: string; versions: VersionRow[] }) =>
  versions.length ? (
    <table>
      <thead>
        <tr>
          <th scope="col">Version</th>
          <th scope="col">Status</th>
          <th scope="col">Published</th>
        </tr>
      </thead>
      <tbody>
        {versions.map((version) => (
          <tr>
            <td>
              <a href={versionHref(nodeId, version.version)}>{version.version}</a>
              {version.provenance ? (
                <span class="muted" title="published from CI with a signed provenance (nodereg verify checks it)">
                  {' '}
                  (provenance)
                </span>
              ) : null}
            </td>
            <td>
              <Status status={version.status} />
            </td>
            <td>{day(version.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  ) : (
    <p class="muted">No versions yet.</p>
  );

export const NodePage = ({ viewer, data }: { viewer: Viewer | null; data: NodePageData }) => {
  const { node, versions, classes, registryUrl } = data;
  const latest = node.latest_version?.version;
  return (
    <Layout title={node.name || node.id} viewer={viewer}>
      <h1>
        <Untrusted text={node.name || node.id} />
      </h1>
      <p class="muted">
        {node.id} by <a href={publisherHref(node.publisher?.id ?? '')}>{node.publisher?.id}</a>
        {latest ? ` · latest ${latest}` : ' · no active version'}
        {` · rating ${(node.rating ?? 0).toFixed(1)} · ${node.downloads ?? 0} downloads`}
      </p>
      <p>
        <Untrusted text={node.description} />
      </p>
      <dl>
        <dt>Repository</dt>
        <dd>
          <OutLink url={node.repository} />
        </dd>
        <dt>License</dt>
        <dd>{node.license ? <Untrusted text={node.license} /> : <span class="muted">none given</span>}</dd>
      </dl>
      <h2>Install</h2>
      {latest ? (
        <>
          <Command id="install-comfy" text={`comfy node install ${node.id}`} />
          <Command id="install-nodereg" text={`nodereg node download ${node.id}@${latest} --registry ${registryUrl}`} />
        </>
      ) : (
        <p class="muted">No active version to install.</p>
      )}
      <h2>Versions</h2>
      <Versions nodeId={node.id} versions={versions} />
      <h2>Node classes{latest ? ` in ${latest}` : ''}</h2>
      {classes.length ? (
        <ul>
          {classes.map((row) => (
            <li>
              <code>
                <Untrusted text={row.definition.name} />
              </code>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">None found.</p>
      )}
      <h2>Rating</h2>
      <p>{(node.rating ?? 0).toFixed(1)} of 5</p>
    </Layout>
  );
};
