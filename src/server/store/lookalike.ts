// Node ids that a reader cannot tell apart (`image_tools`, `Image.tools`, `image--tools` beside
// `image-tools`) compare equal in this form, so that one publisher cannot take a look-alike of
// another's node.

/** Lower case, with `_`, `.` and runs of `-` as one `-`. */
export const lookalikeForm = (id: string) => id.toLowerCase().replace(/[_.]/g, '-').replace(/-+/g, '-');

// Each pass turns a run of n dashes into ceil(n / 2): seven passes bring a run within a 100-character id to one.
const DASH_PASSES = 7;

/**
 * `lookalikeForm` of a column in SQL that SQLite and PostgreSQL both run, and index (migration
 * 'node-lookalikes'); a query must use this very text to use the index.
 */
export function lookalikeSql(column: string): string {
  let sql = `replace(replace(lower(${column}), '_', '-'), '.', '-')`;
  for (let i = 0; i < DASH_PASSES; i++) sql = `replace(${sql}, '--', '-')`;
  return sql;
}

export const NODE_LOOKALIKE = lookalikeSql('id');
