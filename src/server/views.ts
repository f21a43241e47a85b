// Rows of the store → the wire shapes of src/contract/resources.ts. Optional fields that are unset
// are left out (the wire has no nulls), except the strings answers always carry, which are "";
// download URLs are built on each response from the public URL.
import {
  HOST_APP_ALIASES,
  NODE_ANSWERED_FIELDS,
  NODE_ANSWERED_LISTS,
  PUBLISHER_ANSWERED_FIELDS,
  VERSION_ANSWERED_FIELDS,
  VERSION_ANSWERED_LISTS,
  type Invitation,
  type Node,
  type NodeVersion,
  type Publisher,
  type PublisherMember,
} from '../contract/resources.js';
import type {
  InvitationRow,
  MemberRole,
  MemberRow,
  NodeRow,
  PublisherRow,
  RegistryStore,
  VersionRow,
} from './store/registry-store.js';

/** Drops null and undefined values. */
type Present<T> = { [K in keyof T]: Exclude<T[K], null> };
function present<T extends Record<string, unknown>>(object: T): Present<T> {
  const out: Record<string, unknown> = {};
  for (const key in object) {
    const value = object[key];
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out as Present<T>;
}

/** The string fields a wire shape always has. */
type Answered<T> = { [K in keyof T as string extends K ? never : T[K] extends string ? K : never]: string };
const blanks = <T>(fields: readonly string[]) => Object.fromEntries(fields.map((field) => [field, ''])) as Answered<T>;
const emptyLists = (fields: readonly string[]) => Object.fromEntries(fields.map((field) => [field, [] as string[]]));
const NODE_BLANKS = { ...blanks<Node>(NODE_ANSWERED_FIELDS), ...emptyLists(NODE_ANSWERED_LISTS) };
const VERSION_BLANKS = {
  ...blanks<NodeVersion>(VERSION_ANSWERED_FIELDS),
  ...emptyLists(VERSION_ANSWERED_LISTS),
  deprecated: false,
};

/**
 * `view` with the hosted registry's name of each of its fields beside ours, same value (DESIGN.md §12):
 * the field's clients read those names.
 */
function withHostedNames<T extends Record<string, unknown>>(view: T): T {
  const out: Record<string, unknown> = view;
  for (const [hosted, ours] of Object.entries(HOST_APP_ALIASES)) if (ours in view) out[hosted] = view[ours];
  return view;
}
const PUBLISHER_BLANKS = blanks<Publisher>(PUBLISHER_ANSWERED_FIELDS);

/** Where a version's archive is kept in the archive storage (its download path, after `/archives/`). */
export function archiveKey(publisherId: string, nodeId: string, version: string): string {
  return `${publisherId}/${nodeId}/${version}/node.zip`;
}

export function versionView(
  version: VersionRow,
  publisherId: string,
  publicUrl: string,
  showFindings = false,
): NodeVersion {
  const { created_at, uploaded_at: _uploaded, findings, provenance, ...fields } = version;
  const downloadUrl =
    version.archive_sha256 !== null
      ? `${publicUrl}/archives/${[publisherId, version.node_id, version.version].map(encodeURIComponent).join('/')}/node.zip`
      : undefined;
  return withHostedNames({
    ...VERSION_BLANKS,
    ...present({ ...fields, findings: showFindings ? findings : undefined, createdAt: created_at, downloadUrl }),
    // only when there is one: answers of versions without keep their shape
    ...(provenance ? { has_provenance: true } : {}),
  } as NodeVersion);
}

/** A member as the wire shows it; the e-mail only to those allowed to see it (members and admins). */
export function memberView(member: MemberRow, showEmail: boolean): PublisherMember {
  return {
    id: member.id,
    role: member.role,
    user: present({ id: member.user.id, name: member.user.name, email: showEmail ? member.user.email : null }),
  };
}

/** An invitation as the wire shows it: names and ids, never an e-mail. */
export function invitationView(invitation: InvitationRow): Invitation {
  return present({
    publisher: present(invitation.publisher),
    user: invitation.user,
    role: invitation.role,
    invited_by: invitation.invited_by,
    status: 'pending' as const,
    created_at: invitation.created_at,
  });
}

/** An invitation of an e-mail address: no user, no time, nothing that tells whether an account has the address. */
export function addressInvitationView(publisher: Pick<PublisherRow, 'id' | 'name'>, role: MemberRole): Invitation {
  return { publisher: present({ id: publisher.id, name: publisher.name }), role, status: 'pending' };
}

/** A member whose role an owner changed at once, in the invitation's shape (no e-mail). */
export function changedRoleView(member: MemberRow): Invitation {
  return {
    publisher: { id: member.publisher_id },
    user: { id: member.user.id, name: member.user.name },
    role: member.role,
    status: 'member',
    created_at: member.created_at,
  };
}

export function publisherView(
  publisher: PublisherRow,
  members?: { rows: MemberRow[]; showEmails: boolean },
): Publisher {
  const { created_at, ...fields } = publisher;
  const memberViews = members?.rows.map((member) => memberView(member, members.showEmails));
  return { ...PUBLISHER_BLANKS, ...present({ ...fields, createdAt: created_at, members: memberViews }) };
}

/** `latest`: the node's latest_version, as the store chose it (RegistryStore.latestVersions). */
export function nodeView(
  node: NodeRow,
  publisher: PublisherRow | undefined,
  latest: VersionRow | undefined,
  publicUrl: string,
): Node {
  const {
    publisher_id,
    updated_at: _updated,
    generation: _generation,
    versions_generation: _versions,
    ...fields
  } = node;
  return withHostedNames({
    ...NODE_BLANKS,
    ...present({
      ...fields,
      latest_version: latest ? versionView(latest, publisher_id, publicUrl) : undefined,
      publisher: publisher ? publisherView(publisher) : { ...PUBLISHER_BLANKS, id: publisher_id },
    }),
  } as Node);
}

/** Views of many nodes with two more queries in all (their versions, their publishers). */
export async function nodeViews(store: RegistryStore, nodes: readonly NodeRow[], publicUrl: string): Promise<Node[]> {
  const latest = new Map(
    (await store.latestVersions(nodes.map((node) => node.id))).map((version) => [version.node_id, version]),
  );
  const publishers = new Map<string, PublisherRow | undefined>();
  for (const node of nodes) {
    if (!publishers.has(node.publisher_id))
      publishers.set(node.publisher_id, await store.getPublisher(node.publisher_id));
  }
  return nodes.map((node) => nodeView(node, publishers.get(node.publisher_id), latest.get(node.id), publicUrl));
}

/** The view of one node, reading what it needs (its publisher too, unless given). */
export async function oneNodeView(
  store: RegistryStore,
  node: NodeRow,
  publicUrl: string,
  publisher?: PublisherRow,
): Promise<Node> {
  if (!publisher) return (await nodeViews(store, [node], publicUrl))[0];
  return nodeView(node, publisher, (await store.latestVersions([node.id]))[0], publicUrl);
}
