// What the registry keeps, behind an interface so that another database (PostgreSQL) can replace
// SQLite when one process is not enough. Methods are async for that reason; each one that writes
// more than one row does so in one transaction.
import type { WebStore } from './web.js';
import type {
  NodeMetadata,
  NodeVersionInput,
  PublisherInput,
  PUBLISHER_WRITABLE_FIELDS,
  VERSION_PUBLISHED_FIELDS,
} from '../../contract/resources.js';
import type { Finding } from '../../contract/scan.js';
import type { Extraction } from '../../scan/node-classes/extract.js';
import type { ApprovalStore } from './approvals.js';
import type { ArchiveGcStore } from './archive-gc.js';
import type { AddressInvitationStore } from './address-invitations.js';
import type { WebhookStore } from './webhooks.js';
import type { NodeClassStore } from './node-classes.js';
import type { TrustStore } from './trusts.js';
import type { UserLifecycleStore } from './user-lifecycle.js';
import type { AuditStore } from './audit.js';
import type {
  MEMBER_ROLES,
  NODE_SORTS,
  NODE_STATUS,
  NODE_VERSION_STATUS,
  PUBLISHER_STATUS,
} from '../../contract/limits.js';

export type MemberRole = (typeof MEMBER_ROLES)[number];
export type NodeStatus = (typeof NODE_STATUS)[number];
export type VersionStatus = (typeof NODE_VERSION_STATUS)[number];
export type PublisherStatus = (typeof PUBLISHER_STATUS)[number];
export type NodeSort = (typeof NODE_SORTS)[number];

export interface UserRow {
  id: string;
  name: string;
  email: string | null;
  admin: boolean;
  created_at: string;
  /** Set while an admin has the user disabled: their tokens are refused (user-lifecycle.ts). */
  disabled_at: string | null;
  /** Set once an admin deleted the user: the row stays for what names it. */
  deleted_at: string | null;
}

export interface TokenRow {
  id: string;
  kind: 'user' | 'pat';
  user_id: string;
  publisher_id: string | null;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface NewToken {
  kind: 'user' | 'pat';
  userId: string;
  publisherId?: string;
  name: string;
  hash: string;
  prefix: string;
}

/** What a store keeps of fields the contract defines: every field present, null when unset. */
type Stored<T> = { [K in keyof T]-?: Exclude<T[K], undefined> | null };

export type PublisherFields = Stored<Pick<PublisherInput, (typeof PUBLISHER_WRITABLE_FIELDS)[number]>> & {
  status: PublisherStatus;
};
export interface PublisherRow extends PublisherFields {
  id: string;
  created_at: string;
}

export interface MemberRow {
  id: string;
  publisher_id: string;
  role: MemberRole;
  created_at: string;
  user: { id: string; name: string; email: string | null };
}

/** A pending invitation to join a publisher (members join by consent). */
export interface InvitationRow {
  publisher: { id: string; name: string | null };
  user: { id: string; name: string };
  role: MemberRole;
  invited_by: { id: string; name: string } | null;
  created_at: string;
}
/** An invitation made (or renewed with a new role), or, for a member, the role changed at once. */
export type InviteOutcome =
  | { kind: 'invited'; invitation: InvitationRow }
  | { kind: 'member'; member: MemberRow }
  | 'last-owner';

/** The node fields an update may write. */
export type NodeFields = Stored<NodeMetadata> & { status: NodeStatus };
export interface NodeRow extends NodeFields {
  id: string;
  publisher_id: string;
  downloads: number;
  rating: number;
  created_at: string;
  updated_at: string;
  /** Grows with every write that changes the node's answer (migration 'generations'). */
  generation: number;
  /** Grows with every write to one of its versions only (migration 'version-order'): a download moves `generation`, not this. */
  versions_generation: number;
}

/** What says whether a kept answer of a node is current, and who may read it. */
/** Node ids and publisher ids. */
export interface HeldNames {
  nodeIds: string[];
  publisherIds: string[];
}

/**
 * What a read needs of a node to know whether its kept answer is current and who may read it. The
 * rating is here: a review moves it and not the generation, and answers patch it in.
 */
export type NodeState = Pick<NodeRow, 'id' | 'publisher_id' | 'status' | 'created_at' | 'generation' | 'rating'>;

/**
 * What a review leaves: the node's state after it, or a refusal when the reviewer is a member of the
 * node's publisher (nothing is written then). `changedBy` names the PostgreSQL transaction that changed
 * the rating, when the review changed it (its change notice names it too: store/postgres/changes.ts).
 */
export type Reviewed = { node: NodeState; changedBy?: string; refused?: never } | { refused: 'member'; node?: never };

/** The fields a publish sets, and replaces when retried before the archive arrives. */
export type VersionPendingFields = Stored<Pick<NodeVersionInput, (typeof VERSION_PUBLISHED_FIELDS)[number]>>;
export interface VersionRow extends VersionPendingFields {
  id: string;
  node_id: string;
  version: string;
  tags_admin: string[] | null;
  deprecated: boolean;
  status: VersionStatus;
  status_reason: string | null;
  archive_sha256: string | null;
  archive_size: number | null;
  /** What the scan of the archive found; null when not scanned. */
  findings: Finding[] | null;
  /** The node-class extraction of the archive (success, invalid_format, failed) and why not success; null before. */
  app_node_extract_status: string | null;
  app_node_extract_reason: string | null;
  uploaded_at: string | null;
  created_at: string;
  /** The signed provenance (a DSSE envelope as JSON) of a version published with an exchanged OIDC token. */
  provenance?: string | null;
}
export interface ArchiveRecord {
  sha256: string;
  size: number;
  status: VersionStatus;
  statusReason?: string;
  findings?: Finding[];
  /** The node classes the archive defines, kept with the version (node-classes.ts). */
  classes?: Extraction;
  /** The signed provenance of the archive, when an exchanged OIDC token published it. */
  provenance?: string;
}
export type VersionChanges = Partial<Pick<VersionRow, 'changelog' | 'deprecated' | 'status' | 'status_reason'>>;

export interface PublishInput {
  publisherId: string;
  nodeId: string;
  /** Metadata for a new node, or the changes to an existing one. */
  node: Partial<NodeFields>;
  /** What a new node gets where `node` says nothing; an existing node keeps what it has. */
  nodeDefaults?: Partial<NodeFields>;
  version: string;
  pending: VersionPendingFields;
}
export type PublishOutcome =
  | { kind: 'created' | 'retried'; node: NodeRow; version: VersionRow }
  | { kind: 'other-publisher'; publisherId: string }
  /** A new node whose id looks like another publisher's node's (lookalike.ts). */
  | { kind: 'look-alike'; nodeId: string; publisherId: string }
  | { kind: 'archive-exists'; version: VersionRow }
  /** The version was Banned, Flagged or Deleted before its archive arrived: a publish never revives it. */
  | { kind: 'status-locked'; version: VersionRow };

/** Statuses an upload or a publish never changes (only an admin or, for Deleted, a member does). */
export const LOCKED_VERSION_STATUS: readonly VersionStatus[] = [
  'NodeVersionStatusBanned',
  'NodeVersionStatusFlagged',
  'NodeVersionStatusDeleted',
];

/**
 * How old an archive claim must be to count as left by a dead instance. The upload that holds it renews
 * it every CLAIM_HEARTBEAT_MS while it scans and puts the archive (however long those take), so only a
 * dead one's grows this old.
 */
export const STALE_CLAIM_MS = 2 * 60_000;
/** How often a live upload renews its claim: several renewals fit in STALE_CLAIM_MS, also on a slow database. */
export const CLAIM_HEARTBEAT_MS = 20_000;

/** A token's `last_used_at` is kept to the minute: a token used again within it costs no write. */
export const TOKEN_USE_GRANULARITY_MS = 60_000;

export interface Page<T> {
  rows: T[];
  total: number;
}

export interface RegistryStore
  extends NodeClassStore,
    ApprovalStore,
    TrustStore,
    WebStore,
    ArchiveGcStore,
    AddressInvitationStore,
    UserLifecycleStore,
    WebhookStore,
    AuditStore {
  /** Asks the database for nothing (`SELECT 1`): rejects when it cannot be reached. */
  ping(): Promise<void>;
  /**
   * Counts one request of `key` in the minute `window` (epoch ms / 60,000) and returns that minute's
   * count so far, shared by every instance on the database: the rate limit of a fleet. Only a shared
   * database (PostgreSQL) has it.
   */
  countRequest?(key: string, window: number): Promise<number>;
  /** The registry's own id (registry-id.ts), made on the first call and the same ever after. */
  registryId(): Promise<string>;
  // ---- users and tokens ----
  /** Creates a user and, when given, its first user token, in one transaction. */
  createUser(input: {
    id?: string;
    name: string;
    email?: string | null;
    admin?: boolean;
    token?: Pick<NewToken, 'name' | 'hash' | 'prefix'>;
  }): Promise<UserRow>;
  getUser(id: string): Promise<UserRow | undefined>;
  createToken(input: NewToken): Promise<TokenRow>;
  /** The live (not revoked) token with this hash and its user; records `last_used_at` (to the minute). */
  useToken(hash: string): Promise<{ token: TokenRow; user: UserRow } | undefined>;
  getToken(id: string): Promise<TokenRow | undefined>;
  /**
   * Live tokens, oldest first: a user's own user tokens, or a publisher's PATs, or (`madeBy`) every token
   * of a user, the PATs they made included.
   */
  listTokens(filter: { userId: string } | { publisherId: string } | { madeBy: string }): Promise<TokenRow[]>;
  revokeToken(id: string): Promise<void>;
  /** Grows when a token is revoked or deleted, or a user's admin flag changes: cached authentications older are void. */
  tokenGeneration(): Promise<number>;
  /**
   * Makes `hash` the one live bootstrap token of the admin user `userId`, creating the user if needed,
   * and resolves to true. With `keepLive`, another live bootstrap token stays as it is, and false.
   */
  ensureBootstrapAdmin(userId: string, hash: string, prefix: string, keepLive?: boolean): Promise<boolean>;

  // ---- publishers and members ----
  getPublisher(id: string): Promise<PublisherRow | undefined>;
  /** Creates the publisher with `ownerId` as its owner; 'exists' when the id is taken. */
  createPublisher(id: string, fields: Partial<PublisherFields>, ownerId: string): Promise<PublisherRow | 'exists'>;
  updatePublisher(id: string, changes: Partial<PublisherFields>): Promise<PublisherRow>;
  listMembers(publisherId: string): Promise<MemberRow[]>;
  getRole(publisherId: string, userId: string): Promise<MemberRole | undefined>;
  publishersOfUser(userId: string): Promise<{ id: string; role: MemberRole }[]>;
  /** Adds a member or changes its role; 'last-owner' when that would leave no owner. */
  setMember(publisherId: string, userId: string, role: MemberRole): Promise<MemberRow | 'last-owner'>;
  /** Removes a member and revokes the publisher's tokens (PATs) that user created, in one transaction. */
  removeMember(publisherId: string, userId: string): Promise<'removed' | 'not-member' | 'last-owner'>;
  /**
   * Users not deleted whose id, e-mail (in any case) or name is exactly `text`, in that precedence: an
   * id match alone, else the e-mail matches, else the name matches (at most 5).
   */
  findUsers(text: string): Promise<UserRow[]>;
  /** Invites a user who is not a member (renewing an invitation takes the new role); a member's role changes at once. */
  invite(input: { publisherId: string; userId: string; role: MemberRole; invitedBy: string }): Promise<InviteOutcome>;
  /** Pending invitations of a user, or to a publisher; oldest first. */
  listInvitations(filter: { userId: string } | { publisherId: string }): Promise<InvitationRow[]>;
  /** Turns the user's invitation into a membership, in one transaction; undefined when there is none. */
  acceptInvitation(publisherId: string, userId: string): Promise<MemberRow | undefined>;
  /** Declined by the user or withdrawn by an owner; false when there was none. */
  removeInvitation(publisherId: string, userId: string): Promise<boolean>;

  // ---- nodes ----
  /** Found by any case. */
  getNode(id: string): Promise<NodeRow | undefined>;
  /** The node's state alone, found by any case: a read served from a kept answer needs no more. */
  getNodeState(id: string): Promise<NodeState | undefined>;
  /**
   * Which of these node ids (found as getNode finds them) and publisher ids (as getPublisher) this
   * registry holds, each as given: one query for a list that checks many names.
   */
  heldNames(names: HeldNames): Promise<HeldNames>;
  /** Active nodes of publishers that are not banned, sorted, ties broken by id. */
  listNodes(query: { sort: NodeSort; offset: number; limit: number }): Promise<Page<NodeRow>>;
  /**
   * Active nodes of publishers that are not banned, matching every term (as a prefix) in id, name,
   * description, author or tags; best first. When very many match, those with every term in the id,
   * name or tags come first.
   */
  searchNodes(query: { terms: string[]; offset: number; limit: number }): Promise<Page<NodeRow>>;
  /** A publisher's nodes whose status is one of `statuses`, by id, `limit` of them from `offset`. */
  listPublisherNodes(
    publisherId: string,
    query: { statuses: readonly NodeStatus[]; offset: number; limit: number },
  ): Promise<NodeRow[]>;
  updateNode(id: string, changes: Partial<NodeFields>): Promise<NodeRow>;
  /**
   * Counts a whole download of an Active version, once per `seen` (one client, node and version) a
   * day; false when that client's download was counted already.
   */
  countDownload(nodeId: string, seen: DownloadSeen): Promise<boolean>;
  /**
   * Records (or replaces) a user's review and updates the node's mean rating, in one transaction (which
   * SQLite shares with the reviews that arrive with it, each in a savepoint), unless the user is a member
   * of the node's publisher (refused, nothing written). `nodeId` as stored (a NodeState's id).
   */
  review(nodeId: string, userId: string, star: number): Promise<Reviewed>;

  // ---- versions ----
  /** Every version of the node (its id as stored), the highest semver first. */
  listVersions(nodeId: string): Promise<VersionRow[]>;
  /**
   * The `latest_version` of each of these nodes that has one (DESIGN.md §3), chosen by the store in one
   * query: the lists everybody reads never read a node's other versions, however many it has.
   */
  latestVersions(nodeIds: string[]): Promise<VersionRow[]>;
  getVersionById(id: string): Promise<VersionRow | undefined>;
  getVersion(nodeId: string, version: string): Promise<VersionRow | undefined>;
  /** How many versions of the publisher's nodes are Pending with no archive yet (creation caps). */
  countPendingVersions(publisherId: string): Promise<number>;
  /** Creates or updates the node and creates (or, before its archive arrived, renews) the version, in one transaction. */
  publish(input: PublishInput): Promise<PublishOutcome>;
  updateVersion(id: string, changes: VersionChanges): Promise<VersionRow>;
  /**
   * The "already uploaded" decision: claims the right to store the archive of version `id` at `key`.
   * False when the version has its archive, is no longer Pending (Banned, Flagged or Deleted), or
   * another upload holds the claim. Of racing claims exactly
   * one is true. A claim older than STALE_CLAIM_MS was left by an instance that died between claiming
   * and recording: it is taken over.
   */
  claimArchive(id: string, key: string): Promise<boolean>;
  /** Gives a claim up (the archive was not stored). */
  releaseArchive(id: string): Promise<void>;
  /** Dates the claim on version `id` at `key` now (the upload holding it is alive); nothing when it is gone. */
  renewArchiveClaim(id: string, key: string): Promise<void>;
  /** Claims left by a process that died before recording the archive (see migration 'archive-claims'). */
  listArchiveClaims(): Promise<{ version_id: string; key: string; created_at: string }[]>;
  /**
   * Records the archive of a version and its scan's findings and, when it is still Pending, its new
   * status and `statusReason` (a status an admin set meanwhile stays), and removes its claim, in one
   * transaction.
   */
  recordArchive(id: string, archive: ArchiveRecord): Promise<VersionRow>;
}

/** Who downloaded what, on which UTC day (`YYYY-MM-DD`): `key` is a keyed hash, never an address. */
export interface DownloadSeen {
  day: string;
  key: string;
}
