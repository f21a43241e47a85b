// Rows of the store → the wire shapes of src/contract/resources.ts. Optional fields that are unset
// are left out (the wire has no nulls); download URLs are built on each response from the public URL.
import semver from 'semver';
import type { Node, NodeVersion, Publisher, PublisherMember } from '../contract/resources.js';
import type { MemberRow, NodeRow, PublisherRow, RegistryStore, VersionRow } from './store/registry-store.js';

/** Drops null and undefined values. */
function present<T extends Record<string, unknown>>(object: T): { [K in keyof T]: Exclude<T[K], null> } {
  const out: Record<string, unknown> = {};
  for (const key in object) {
    const value = object[key];
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out as never;
}

/** Newest semver first (never text order). */
export const bySemverDesc = (a: VersionRow, b: VersionRow) => semver.rcompare(a.version, b.version);

/**
 * Among Active, non-deprecated versions the highest that is not a prerelease; else the highest Active
 * non-deprecated; else the highest Active; else none (DESIGN.md §3).
 */
export function latestVersion(versions: readonly VersionRow[]): VersionRow | undefined {
  const active = versions.filter((v) => v.status === 'NodeVersionStatusActive').sort(bySemverDesc);
  const current = active.filter((v) => !v.deprecated);
  return current.find((v) => semver.prerelease(v.version) === null) ?? current[0] ?? active[0];
}

/** Where a version's archive is kept in the archive storage (its download path, after `/archives/`). */
export function archiveKey(publisherId: string, nodeId: string, version: string): string {
  return `${publisherId}/${nodeId}/${version}/node.zip`;
}

export function versionView(version: VersionRow, publisherId: string, publicUrl: string): NodeVersion {
  const uploaded = version.archive_sha256 !== null;
  return present({
    id: version.id,
    node_id: version.node_id,
    version: version.version,
    changelog: version.changelog,
    createdAt: version.created_at,
    dependencies: version.dependencies,
    deprecated: version.deprecated,
    downloadUrl: uploaded
      ? `${publicUrl}/archives/${[publisherId, version.node_id, version.version].map(encodeURIComponent).join('/')}/node.zip`
      : undefined,
    status: version.status,
    status_reason: version.status_reason,
    supported_accelerators: version.supported_accelerators,
    supported_appui_frontend_version: version.supported_appui_frontend_version,
    supported_appui_version: version.supported_appui_version,
    supported_os: version.supported_os,
    tags: version.tags,
    tags_admin: version.tags_admin,
    archive_sha256: version.archive_sha256,
    archive_size: version.archive_size,
  });
}

/** A member as the wire shows it; the e-mail only to those allowed to see it (members and admins). */
export function memberView(member: MemberRow, showEmail: boolean): PublisherMember {
  return {
    id: member.id,
    role: member.role,
    user: present({ id: member.user.id, name: member.user.name, email: showEmail ? member.user.email : null }),
  };
}

export function publisherView(publisher: PublisherRow, members?: { rows: MemberRow[]; showEmails: boolean }): Publisher {
  return present({
    id: publisher.id,
    name: publisher.name,
    createdAt: publisher.created_at,
    description: publisher.description,
    logo: publisher.logo,
    source_code_repo: publisher.source_code_repo,
    status: publisher.status,
    support: publisher.support,
    website: publisher.website,
    members: members?.rows.map((member) => memberView(member, members.showEmails)),
  });
}

export function nodeView(node: NodeRow, publisher: PublisherRow | undefined, versions: readonly VersionRow[], publicUrl: string): Node {
  const latest = latestVersion(versions);
  return present({
    id: node.id,
    name: node.name,
    author: node.author,
    banner_url: node.banner_url,
    category: node.category,
    created_at: node.created_at,
    description: node.description,
    downloads: node.downloads,
    repohost_stars: node.repohost_stars,
    icon: node.icon,
    latest_version: latest ? versionView(latest, node.publisher_id, publicUrl) : undefined,
    license: node.license,
    preempted_app_node_names: node.preempted_app_node_names,
    publisher: publisher ? publisherView(publisher) : { id: node.publisher_id },
    rating: node.rating,
    repository: node.repository,
    search_ranking: node.search_ranking,
    status: node.status,
    status_detail: node.status_detail,
    supported_accelerators: node.supported_accelerators,
    supported_appui_frontend_version: node.supported_appui_frontend_version,
    supported_appui_version: node.supported_appui_version,
    supported_os: node.supported_os,
    tags: node.tags,
    tags_admin: node.tags_admin,
    translations: node.translations,
  });
}

/** Views of many nodes with two more queries in all (their versions, their publishers). */
export async function nodeViews(store: RegistryStore, nodes: readonly NodeRow[], publicUrl: string): Promise<Node[]> {
  const versions = await store.listVersions(nodes.map((node) => node.id));
  const byNode = new Map<string, VersionRow[]>();
  for (const version of versions) byNode.set(version.node_id, [...(byNode.get(version.node_id) ?? []), version]);
  const publishers = new Map<string, PublisherRow | undefined>();
  for (const node of nodes) {
    if (!publishers.has(node.publisher_id)) publishers.set(node.publisher_id, await store.getPublisher(node.publisher_id));
  }
  return nodes.map((node) => nodeView(node, publishers.get(node.publisher_id), byNode.get(node.id) ?? [], publicUrl));
}

/** The view of one node, reading what it needs. */
export async function oneNodeView(store: RegistryStore, node: NodeRow, publicUrl: string): Promise<Node> {
  return (await nodeViews(store, [node], publicUrl))[0];
}
