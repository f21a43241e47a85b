import { JSON_MAX_DEPTH, JSON_MAX_VALUES } from '../contract/limits.js';
import { badRequest, tooLarge, type HttpError } from './errors.js';

/**
 * Follows a JSON body as it arrives, byte by byte and without parsing it: how deep it nests and how
 * many values it holds (array items, object members, arrays and objects). A body over either budget is
 * refused before it is parsed, so that what parsing and validating costs stays bounded whatever is sent
 * (a million `{}` or `0` would otherwise cost seconds and hundreds of MiB).
 */
export class JsonShape {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Commas and openings seen outside strings: one more than the values, at most. */
  private values = 0;

  /** Takes the next bytes; returns the error to answer once a budget is exceeded. */
  feed(chunk: Uint8Array): HttpError | undefined {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    // Where the next backslash and the next quote are, at or after i (bytes.length when there is none):
    // found once per chunk and again only past them, so neither many short strings nor a string of many
    // escapes searches to the chunk's end from each plain byte (quadratic on a chunk of `\na`).
    let backslash = -1;
    let quote = -1;
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i];
      if (this.inString) {
        // Bytes of multi-byte UTF-8 characters are all >= 0x80: they never look like these.
        if (this.escaped) this.escaped = false;
        else if (byte === 0x5c) this.escaped = true;
        else if (byte === 0x22) this.inString = false;
        else {
          // The string's plain bytes up to its closing quote or next backslash, skipped with a native
          // search: a large base64 image walked byte by byte would hold the event loop.
          if (backslash < i) {
            backslash = bytes.indexOf(0x5c, i);
            if (backslash < 0) backslash = bytes.length;
          }
          if (quote < i) {
            quote = bytes.indexOf(0x22, i);
            if (quote < 0) quote = bytes.length;
          }
          i = Math.min(quote, backslash) - 1;
        }
      } else if (byte === 0x22) this.inString = true;
      else if (byte === 0x5b || byte === 0x7b) {
        this.values++;
        if (++this.depth > JSON_MAX_DEPTH)
          return badRequest(`the JSON body nests deeper than ${JSON_MAX_DEPTH} levels`);
      } else if (byte === 0x5d || byte === 0x7d) this.depth--;
      else if (byte === 0x2c) this.values++;
      if (this.values > JSON_MAX_VALUES) {
        return tooLarge(`the JSON body holds more than ${JSON_MAX_VALUES} values (array items and object members)`);
      }
    }
    return undefined;
  }
}

const WHITESPACE = new Set([0x20, 0x0a, 0x0d, 0x09]);
const ESCAPES = new Set([...'"\\/bfnrt'].map((c) => c.charCodeAt(0)));
const isDigit = (byte: number | undefined) => byte !== undefined && byte >= 0x30 && byte <= 0x39;
const isHex = (byte: number | undefined) =>
  isDigit(byte) || (byte !== undefined && (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66);
const LITERALS = new Map(
  [0x74, 0x66, 0x6e].map((first) => [first, Buffer.from(first === 0x74 ? 'true' : first === 0x66 ? 'false' : 'null')]),
);

/** A position in a body being walked as JSON text. */
class JsonCursor {
  i = 0;
  constructor(readonly bytes: Uint8Array) {}

  skipSpace(): void {
    while (WHITESPACE.has(this.bytes[this.i])) this.i++;
  }

  /** Past a string that starts here; false at a byte that cannot be in one (the cursor on it). */
  string(): boolean {
    const { bytes } = this;
    for (this.i++; this.i < bytes.length; ) {
      const byte = bytes[this.i];
      if (byte === 0x22) {
        this.i++;
        return true;
      }
      if (byte < 0x20) return false;
      if (byte !== 0x5c) this.i++;
      else if (bytes[this.i + 1] === 0x75) {
        for (const end = (this.i += 2) + 4; this.i < end; this.i++) if (!isHex(bytes[this.i])) return false;
      } else if (ESCAPES.has(bytes[++this.i])) this.i++;
      else return false;
    }
    return false;
  }

  /** Past a number or a literal that starts here; false at a byte that cannot continue it (the cursor on it). */
  scalar(): boolean {
    const { bytes } = this;
    const literal = LITERALS.get(bytes[this.i]);
    if (literal) {
      for (const expected of literal) {
        if (bytes[this.i] !== expected) return false;
        this.i++;
      }
      return true;
    }
    if (bytes[this.i] === 0x2d) this.i++;
    if (bytes[this.i] === 0x30) this.i++;
    else if (!this.digits()) return false;
    if (bytes[this.i] === 0x2e) {
      this.i++;
      if (!this.digits()) return false;
    }
    if (bytes[this.i] === 0x65 || bytes[this.i] === 0x45) {
      if (bytes[++this.i] === 0x2b || bytes[this.i] === 0x2d) this.i++;
      if (!this.digits()) return false;
    }
    return true;
  }

  /** Past one digit or more; false when there is none. */
  private digits(): boolean {
    if (!isDigit(this.bytes[this.i])) return false;
    while (isDigit(this.bytes[this.i])) this.i++;
    return true;
  }
}

/**
 * Where a body JSON.parse refused stops being JSON: the offset of its first byte that no JSON text
 * could have there, or its length when it ends too soon; undefined when it is JSON after all. JSON.parse
 * says so only in words that quote the body (a gzip body sent without its header quoted its binary
 * bytes back), so an answer names this offset instead. Called on a refused body only; walks it once.
 */
export function jsonErrorOffset(bytes: Uint8Array): number | undefined {
  const at = new JsonCursor(bytes);
  const closers: number[] = []; // the bracket that closes each open array or object
  let want: 'value' | 'key' = 'value';
  for (;;) {
    at.skipSpace();
    if (want === 'key') {
      if (bytes[at.i] !== 0x22 || !at.string()) return at.i;
      at.skipSpace();
      if (bytes[at.i++] !== 0x3a) return at.i - 1;
      at.skipSpace();
    }
    const byte = bytes[at.i];
    if (byte === 0x7b || byte === 0x5b) {
      at.i++;
      at.skipSpace();
      if (bytes[at.i] !== byte + 2) {
        closers.push(byte + 2);
        want = byte === 0x7b ? 'key' : 'value';
        continue;
      }
      at.i++;
    } else if (!(byte === 0x22 ? at.string() : at.scalar())) return at.i;
    const next = afterValue(at, closers);
    if (next !== 'more') return next;
    want = closers.at(-1) === 0x7d ? 'key' : 'value';
  }
}

/** After a value: a comma (past it: 'more'), the brackets that close containers, or the end (undefined) or a byte out of place. */
function afterValue(at: JsonCursor, closers: number[]): number | undefined | 'more' {
  for (;;) {
    at.skipSpace();
    if (closers.length === 0) return at.i < at.bytes.length ? at.i : undefined;
    if (at.bytes[at.i] === closers.at(-1)) {
      closers.pop();
      at.i++;
      continue;
    }
    if (at.bytes[at.i] !== 0x2c) return at.i;
    at.i++;
    return 'more';
  }
}
