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
    // escapes searches to the chunk's end from each plain byte (~100 ms a MiB of `\na`).
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
          // search: a 25 MiB base64 image cost 70 ms byte by byte on the event loop.
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
        if (++this.depth > JSON_MAX_DEPTH) return badRequest(`the JSON body nests deeper than ${JSON_MAX_DEPTH} levels`);
      } else if (byte === 0x5d || byte === 0x7d) this.depth--;
      else if (byte === 0x2c) this.values++;
      if (this.values > JSON_MAX_VALUES) {
        return tooLarge(`the JSON body holds more than ${JSON_MAX_VALUES} values (array items and object members)`);
      }
    }
    return undefined;
  }
}
