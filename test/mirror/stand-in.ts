// A stand-in for the hosted registry: answers its read API with hosted-style bodies (the hosted field
// names, download URLs on another 127.0.0.1 host standing for its CDN), logs every request, and can
// hang, answer 500, change an archive's bytes or break off a download.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInVersion {
  version: string;
  zip: Buffer;
  /** Days before now it was published. */
  ageDays?: number;
  dependencies?: string[];
  status?: string;
}

export interface StandIn {
  url: string;
  cdnUrl: string;
  /** Every request either server received, as `METHOD path`. */
  requests: string[];
  mode: 'ok' | 'hang' | '500';
  /** Downloads send half the archive, then the connection is cut. */
  cutDownloads: boolean;
  /** Versions carry the `archive_sha256` of their bytes (the hosted registry sends none). */
  declareSha: boolean;
  nodes: Map<string, { publisher: string; versions: StandInVersion[] }>;
  close(): Promise<void>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

export async function startStandIn(): Promise<StandIn> {
  const state = {
    requests: [] as string[],
    mode: 'ok' as StandIn['mode'],
    cutDownloads: false,
    declareSha: false,
    nodes: new Map<string, { publisher: string; versions: StandInVersion[] }>(),
  };
  let cdnUrl = '';
  const versionBody = (id: string, publisher: string, v: StandInVersion) => ({
    id: `${id}-${v.version}`,
    version: v.version,
    changelog: '',
    createdAt: new Date(Date.now() - (v.ageDays ?? 30) * DAY_MS).toISOString(),
    dependencies: v.dependencies ?? [],
    deprecated: false,
    downloadUrl: `${cdnUrl}/${publisher}/${id}/${v.version}/node.zip`,
    status: v.status ?? 'NodeVersionStatusActive',
    status_reason: '',
    supported_comfyui_version: '>=0.3.0',
    supported_comfyui_frontend_version: '',
    comfy_node_extract_status: 'success',
    supported_os: [],
    supported_accelerators: [],
    ...(state.declareSha ? { archive_sha256: sha256(v.zip) } : {}),
  });

  const api = createServer((request, response) => {
    state.requests.push(`${request.method} ${request.url}`);
    if (state.mode === 'hang') return;
    if (state.mode === '500') return void response.writeHead(500).end('{"error":"internal"}');
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const match = /^\/nodes\/([^/]+)(\/versions|\/install)?$/.exec(url.pathname);
    const node = match && state.nodes.get(decodeURIComponent(match[1]!));
    if (!match || !node)
      return void response.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not found"}');
    const id = decodeURIComponent(match[1]!);
    const versions = [...node.versions].reverse().map((v) => versionBody(id, node.publisher, v));
    const body =
      match[2] === '/versions'
        ? versions
        : match[2] === '/install'
          ? versions.find((v) => v.version === url.searchParams.get('version'))
          : {
              id,
              name: id,
              description: `${id}, from the hosted registry`,
              author: 'someone',
              publisher: { id: node.publisher, name: node.publisher },
              latest_version: versions[0],
              github_stars: 12,
              downloads: 3,
              status: 'NodeStatusActive',
              supported_comfyui_version: '',
              preempted_comfy_node_names: [],
            };
    response.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
  });

  const cdn = createServer((request, response) => {
    state.requests.push(`${request.method} cdn${request.url}`);
    if (state.mode === 'hang') return;
    const [, publisher, id, version] = /^\/([^/]+)\/([^/]+)\/([^/]+)\/node\.zip$/.exec(request.url ?? '') ?? [];
    const node = id ? state.nodes.get(id) : undefined;
    const found = node?.publisher === publisher ? node?.versions.find((v) => v.version === version) : undefined;
    if (!found) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/zip', 'content-length': found.zip.length });
    if (!state.cutDownloads) return void response.end(found.zip);
    response.write(found.zip.subarray(0, found.zip.length >> 1), () => response.destroy());
  });

  const url = await listen(api);
  cdnUrl = await listen(cdn);
  const standIn = Object.assign(state, {
    url,
    cdnUrl,
    close: async () => {
      for (const server of [api, cdn]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  });
  return standIn;
}
