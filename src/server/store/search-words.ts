// Words joined in one token of an id or a name (ComfyUI-VideoHelperSuite, ComfyUI_UltimateSDUpscale)
// are one word to the full-text indexes, which match a search term as the start of a word: "helper"
// or "SDUpscale" found nothing. The node's `words` column holds, for each such token, the rest of it
// from each later word on (helpersuite, suite; sdupscale, upscale), so any of its words, or a run of
// them, is the start of a word there too; the query side stays a plain prefix match.

/**
 * The nodes each store fills when it opens (stored before the column, or by an older nodereg), read
 * through an index of those rows alone (migration 'unfilled-rows-indexes'): nothing once all are filled.
 */
export const UNFILLED_WORDS = 'SELECT seq, id, name FROM nodes WHERE words IS NULL';

/** A run of letters and digits, as search terms and the indexes' tokenizers take them. */
const TOKEN = /[\p{L}\p{N}]+/gu;
/** The words within a token: split where the case changes (SDUpscale: SD, Upscale), at digits, and around letters without case. */
const PART = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|[^\p{Lu}\p{Ll}\p{N}]+/gu;

/**
 * The words of a token, with the host application's name kept whole however it is written (ComfyUI,
 * comfyUI, ComfyUi; ComfyUIManager: ComfyUI, Manager). Split, it gave nearly every node (ComfyUI-…) the
 * word `ui`, and a search for `ui`, meant for nodes about user interfaces, listed them all.
 */
function tokenParts(token: string): string[] {
  const parts: string[] = [];
  for (const part of token.match(PART) ?? []) {
    if (/^ui$/i.test(part) && /^comfy$/i.test(parts.at(-1) ?? '')) parts[parts.length - 1] += part;
    else parts.push(part);
  }
  return parts;
}

/**
 * The `words` column of a node, from its id and name: lower case, each once. Never null, so null marks
 * a row stored before the column, still to fill.
 */
export function searchWords(id: string, name: string | null | undefined): string {
  const words = new Set<string>();
  for (const token of `${id} ${name ?? ''}`.match(TOKEN) ?? []) {
    const parts = tokenParts(token);
    for (let i = 1; i < parts.length; i++) words.add(parts.slice(i).join('').toLowerCase());
  }
  return [...words].join(' ');
}
