// A node as every store keeps it: columns for what is searched, sorted or constrained (the
// contract's NODE_COLUMN_FIELDS, and status), and one JSON document for the rest of its metadata.
import { NODE_COLUMN_FIELDS, NODE_METADATA_FIELDS, NodeMetadata } from '../../contract/resources.js';
import { NODE_STATUS } from '../../contract/limits.js';
import type { NodeRow } from './registry-store.js';
import { count, json, oneOf, optionalCount, optionalText, RowShapeError, text, textList, type Row } from './rows.js';

/** Node fields with a column of their own. */
export const NODE_COLUMNS = [...NODE_COLUMN_FIELDS, 'status'] as const;
/** Node fields kept in the `metadata` document. */
export const NODE_DOCUMENT_FIELDS = NODE_METADATA_FIELDS.filter(
  (field) => !(NODE_COLUMNS as readonly string[]).includes(field),
);

const isRecord = (value: unknown): value is Row => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The `metadata` document: JSON text (SQLite) or parsed (PostgreSQL). */
export function nodeDocument(row: Row): Row {
  const document = json(row, 'metadata');
  if (!isRecord(document)) throw new RowShapeError('metadata', document);
  return document;
}

function translations(document: Row): Record<string, unknown> | null {
  const value = document.translations;
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) throw new RowShapeError('metadata.translations', value);
  return value;
}

/** The fields of a node's document, every one present (null when unset). */
function documentFields(document: Row) {
  return {
    license: optionalText(document, 'license'),
    repository: optionalText(document, 'repository'),
    icon: optionalText(document, 'icon'),
    banner_url: optionalText(document, 'banner_url'),
    category: optionalText(document, 'category'),
    supported_os: textList(document, 'supported_os'),
    supported_accelerators: textList(document, 'supported_accelerators'),
    supported_appui_version: optionalText(document, 'supported_appui_version'),
    supported_appui_frontend_version: optionalText(document, 'supported_appui_frontend_version'),
    preempted_app_node_names: textList(document, 'preempted_app_node_names'),
    translations: translations(document),
    tags_admin: textList(document, 'tags_admin'),
    repohost_stars: optionalCount(document, 'repohost_stars'),
    status_detail: optionalText(document, 'status_detail'),
  };
}

/** A row of `nodes` → the node the store returns (the rating's bookkeeping and the search words left out). */
export const decodeNode = (row: Row): NodeRow => ({
  ...documentFields(nodeDocument(row)),
  id: text(row, 'id'),
  publisher_id: text(row, 'publisher_id'),
  name: optionalText(row, 'name'),
  description: optionalText(row, 'description'),
  author: optionalText(row, 'author'),
  tags: textList(row, 'tags'),
  search_ranking: optionalCount(row, 'search_ranking'),
  status: oneOf(row, 'status', NODE_STATUS),
  downloads: count(row, 'downloads'),
  rating: count(row, 'rating'),
  created_at: text(row, 'created_at'),
  updated_at: text(row, 'updated_at'),
  generation: count(row, 'generation'),
  versions_generation: count(row, 'versions_generation'),
});

/**
 * The document after `changes` (null clears a field), or undefined when they change none of its
 * fields. Its fields are checked against the contract: the document holds nothing else.
 */
export function nextDocument(current: Row, changes: Row): Row | undefined {
  const fields = NODE_DOCUMENT_FIELDS.filter((field) => changes[field] !== undefined);
  if (fields.length === 0) return undefined;
  const document = { ...current };
  for (const field of fields) {
    if (changes[field] === null) delete document[field];
    else document[field] = changes[field];
  }
  return NodeMetadata.parse(document);
}
