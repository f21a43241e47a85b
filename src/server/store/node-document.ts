// A node as every store keeps it: columns for what is searched, sorted or constrained (the
// contract's NODE_COLUMN_FIELDS, and status), and one JSON document for the rest of its metadata.
import { NODE_COLUMN_FIELDS, NODE_METADATA_FIELDS, NodeMetadata } from '../../contract/resources.js';
import type { NodeRow } from './registry-store.js';

type Raw = Record<string, unknown>;

/** Node fields with a column of their own. */
export const NODE_COLUMNS = [...NODE_COLUMN_FIELDS, 'status'] as const;
/** Node fields kept in the `metadata` document. */
export const NODE_DOCUMENT_FIELDS = NODE_METADATA_FIELDS.filter((field) => !(NODE_COLUMNS as readonly string[]).includes(field));
const UNSET_DOCUMENT_FIELDS = Object.fromEntries(NODE_DOCUMENT_FIELDS.map((field) => [field, null]));

/** A node's columns and its parsed document → the row the store returns (every field present, null when unset). */
export function nodeFromColumns(columns: Raw, document: Raw): NodeRow {
  // the rating's bookkeeping, and the split words the search indexes (search-words.ts)
  const { rating_sum: _sum, rating_count: _count, words: _words, ...fields } = columns;
  return { ...UNSET_DOCUMENT_FIELDS, ...document, ...fields } as unknown as NodeRow;
}

/**
 * The document after `changes` (null clears a field), or undefined when they change none of its
 * fields. Its fields are checked against the contract: the document holds nothing else.
 */
export function nextDocument(current: Raw, changes: Record<string, unknown>): Raw | undefined {
  const fields = NODE_DOCUMENT_FIELDS.filter((field) => changes[field] !== undefined);
  if (fields.length === 0) return undefined;
  const document = { ...current };
  for (const field of fields) {
    if (changes[field] === null) delete document[field];
    else document[field] = changes[field];
  }
  return NodeMetadata.parse(document);
}
