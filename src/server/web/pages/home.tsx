// Home and search: a search box, filters for OS, accelerator and host-application version, and the
// matching nodes with their publisher, latest version, rating and tags.
import semver from 'semver';
import { searchTerms } from '../../../contract/limits.js';
import type { Node } from '../../../contract/resources.js';
import type { ServerContext } from '../../context.js';
import { nodeViews } from '../../views.js';
import { Layout, nodeHref, publisherHref, Untrusted, type Viewer } from '../layout.js';

const PAGE_SIZE = 30;
/** With a filter set, this many matches are read and filtered: the filters apply to the best of them. */
const FILTERED_POOL = 300;

export interface HomeQuery {
  q: string;
  os: string;
  accelerator: string;
  appui: string;
}

export const homeQuery = (get: (name: string) => string | undefined): HomeQuery => ({
  q: (get('q') ?? get('search') ?? '').slice(0, 200),
  os: (get('os') ?? '').slice(0, 50),
  accelerator: (get('accelerator') ?? '').slice(0, 50),
  appui: (get('appui') ?? '').slice(0, 50),
});

const listOf = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v) => typeof v === 'string') : []);

/** True when the node says nothing of this filter, or says it fits. */
function fits(node: Node, query: HomeQuery): boolean {
  const os = listOf(node.supported_os);
  const accelerators = listOf(node.supported_accelerators);
  if (query.os && os.length && !os.some((value) => value.toLowerCase() === query.os.toLowerCase())) return false;
  if (
    query.accelerator &&
    accelerators.length &&
    !accelerators.some((v) => v.toLowerCase() === query.accelerator.toLowerCase())
  )
    return false;
  const range = node.supported_appui_version;
  const version = semver.coerce(query.appui);
  if (version && range && semver.validRange(range) && !semver.satisfies(version, range)) return false;
  return true;
}

export async function findNodes(ctx: ServerContext, query: HomeQuery): Promise<{ nodes: Node[]; total: number }> {
  const filtered = Boolean(query.os || query.accelerator || query.appui);
  const limit = filtered ? FILTERED_POOL : PAGE_SIZE;
  const terms = searchTerms(query.q);
  const found = terms.length
    ? await ctx.store.searchNodes({ terms, offset: 0, limit })
    : query.q.trim()
      ? { rows: [], total: 0 }
      : await ctx.store.listNodes({ sort: 'created_at', offset: 0, limit });
  const nodes = (await nodeViews(ctx.store, found.rows, ctx.publicUrl())).filter((node) => fits(node, query));
  return { nodes: nodes.slice(0, PAGE_SIZE), total: filtered ? nodes.length : found.total };
}

const choices = (nodes: Node[], field: 'supported_os' | 'supported_accelerators', chosen: string) =>
  [...new Set([...nodes.flatMap((node) => listOf(node[field])), ...(chosen ? [chosen] : [])])].sort();

const Filter = ({ name, label, values, chosen }: { name: string; label: string; values: string[]; chosen: string }) => (
  <label>
    {label}
    <select name={name} id={`filter-${name}`}>
      <option value="">any</option>
      {values.map((value) => (
        <option value={value} selected={value === chosen}>
          {value}
        </option>
      ))}
    </select>
  </label>
);

const Result = ({ node }: { node: Node }) => (
  <li>
    <a href={nodeHref(node.id ?? '')}>
      <strong>
        <Untrusted text={node.name || node.id} />
      </strong>
    </a>{' '}
    <span class="muted">
      by <a href={publisherHref(node.publisher?.id ?? '')}>{node.publisher?.id}</a>
      {node.latest_version?.version ? ` · ${node.latest_version.version}` : ' · no active version'}
      {` · rating ${(node.rating ?? 0).toFixed(1)}`}
      {` · ${node.downloads ?? 0} downloads`}
    </span>
    <div>
      <Untrusted text={node.description} />
    </div>
    <div>
      {listOf(node.tags).map((tag) => (
        <span class="tag">
          <Untrusted text={tag} />
        </span>
      ))}
    </div>
  </li>
);

export const HomePage = ({
  viewer,
  query,
  nodes,
  total,
  options,
}: {
  viewer: Viewer | null;
  query: HomeQuery;
  nodes: Node[];
  total: number;
  options: Node[];
}) => (
  <Layout title={query.q ? `Search: ${query.q}` : 'Nodes'} viewer={viewer}>
    <h1>Nodes</h1>
    <form class="search" method="get" action="/" role="search">
      <label>
        Search nodes
        <input type="search" name="q" id="q" value={query.q} maxlength={200} />
      </label>
      <Filter name="os" label="OS" values={choices(options, 'supported_os', query.os)} chosen={query.os} />
      <Filter
        name="accelerator"
        label="Accelerator"
        values={choices(options, 'supported_accelerators', query.accelerator)}
        chosen={query.accelerator}
      />
      <label>
        Host application version
        <input type="text" name="appui" id="appui" value={query.appui} maxlength={50} placeholder="e.g. 0.3.10" />
      </label>
      <button type="submit">Search</button>
    </form>
    <p class="muted">
      {total} {total === 1 ? 'node' : 'nodes'}
      {nodes.length < total ? `, the first ${nodes.length} shown` : ''}
    </p>
    <ul class="results">
      {nodes.map((node) => (
        <Result node={node} />
      ))}
    </ul>
  </Layout>
);
