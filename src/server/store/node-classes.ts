// The node classes each version defines (DESIGN.md §12), kept in a table of their own (migration
// 'node-classes') so that a class is found by its name: the node that defines it, the packs a
// workflow needs. Shared by both stores: the SQL here is read by SQLite and PostgreSQL alike.
import type { Extraction, NodeClass } from '../../scan/node-classes/extract.js';
import type { Page } from './registry-store.js';

export interface NodeClassRow {
  version_id: string;
  node_id: string;
  /** The class as extracted (its name and fields). */
  definition: NodeClass;
}

export interface NodeClassStore {
  /** The classes a version defines, by name. */
  listNodeClasses(versionId: string): Promise<NodeClassRow[]>;
  /** The Active versions that define a class of this name (at most `limit`), any node. */
  classDefiners(name: string, limit: number): Promise<NodeClassRow[]>;
  /** The classes of Active versions, by name then version, a page at a time. */
  listActiveClasses(query: { offset: number; limit: number }): Promise<Page<NodeClassRow>>;
}

/** What recordArchive writes of an extraction: the version's status and reason, and one row per class. */
export const extractColumns = (extraction: Extraction | undefined) => ({
  status: extraction?.status ?? null,
  reason: extraction ? extraction.reason || null : null,
});

export const CLASS_ROWS = {
  /** (SQLite's; PostgreSQL's types the definition as JSON in its own statement) */
  insert:
    'INSERT INTO node_classes (version_id, node_id, name, definition) SELECT id, node_id, $1, $2 FROM versions WHERE id = $3',
  byVersion: 'SELECT version_id, node_id, definition FROM node_classes WHERE version_id = $1 ORDER BY name',
  definers: `SELECT c.version_id, c.node_id, c.definition FROM node_classes c JOIN versions v ON v.id = c.version_id
    WHERE c.name = $1 AND v.status = 'NodeVersionStatusActive' ORDER BY v.created_at DESC LIMIT $2`,
  count: `SELECT count(*) AS n FROM node_classes c JOIN versions v ON v.id = c.version_id WHERE v.status = 'NodeVersionStatusActive'`,
  page: `SELECT c.version_id, c.node_id, c.definition FROM node_classes c JOIN versions v ON v.id = c.version_id
    WHERE v.status = 'NodeVersionStatusActive' ORDER BY c.name, c.version_id LIMIT $1 OFFSET $2`,
} as const;

/** A row as read: `definition` is JSON text on SQLite, already parsed on PostgreSQL. */
export const toClassRow = (row: Record<string, unknown>): NodeClassRow => ({
  version_id: row.version_id as string,
  node_id: row.node_id as string,
  definition: (typeof row.definition === 'string' ? JSON.parse(row.definition) : row.definition) as NodeClass,
});

/** The same SQL with SQLite's `?` placeholders (each statement above takes its parameters in order). */
export const forSqlite = (sql: string) => sql.replace(/\$\d/g, '?');
