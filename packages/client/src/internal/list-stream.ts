import { Buffer } from 'node:buffer';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const ITEMS_KEY = Buffer.from('"items"');
const NONE = 0;
const CONTAINER = 1;
const STRING = 2;
const SCALAR = 3;

/**
 * Decodes a list reply (`{"kind":…,"metadata":{…},"items":[{…},…]}`) as its bytes arrive: each element of the
 * top-level `items` array is cut out of the byte stream by a scanner that tracks strings and nesting, and is
 * `JSON.parse`d on its own as soon as its last byte is in; the rest of the reply (kind, apiVersion, metadata)
 * is kept as a small skeleton with `"items":[]` and parsed at the end. So the reply is never held as one
 * string next to its parsed form — the peak a whole-text decode has (kube-apiserver answers a
 * `resourceVersion=0` list from its watch cache in one piece whatever the `limit`: ~150 MB for 20,000 pods),
 * and a reply longer than a JavaScript string can hold (~512 MiB) decodes like any other.
 *
 * The result is what `JSON.parse` of the whole text gives. A reply whose shape is not that (no `items`
 * array at the top level, a top-level array or scalar) comes back parsed whole from the bytes kept, so the
 * caller's shape checks report it as before. Malformed JSON throws a `SyntaxError`, as `JSON.parse` does.
 *
 * Follows no upstream code: client-go decodes a list with one `json.Unmarshal` of the body (its
 * `StreamingListDecoder` for WatchList is the event stream); this does in TypeScript what its decoder's
 * single pass over the bytes does. @internal
 */
export class ListStreamDecoder {
  /** Nesting depth at the current byte: 1 inside the top-level object, 2 inside `items`, 3 in an item. */
  #depth = 0;
  #inString = false;
  /** The next byte is escaped (a backslash ended the previous chunk inside a string). */
  #escaped = false;
  /** Inside the top-level `items` array. */
  #inItems = false;
  /** Bytes of the reply outside the items (and, before `items` is seen, everything). */
  #skeleton: Buffer[] = [];
  /** The pieces of the item being read (it may span chunks). */
  #itemParts: Buffer[] = [];
  /** The parsed items, in order. */
  readonly items: unknown[] = [];
  /** The whole reply was not a list shape: every byte is kept for a whole parse. */
  #whole = false;
  /** What the item being read is (NONE between items). */
  #itemKind = NONE;
  /** The top-level `items` key was seen. */
  #itemsSeen = false;
  #bytes = 0;
  /** Decodes one item's text (`JSON.parse` unless the caller gave its own, see `ListOptions.decodeItem`). */
  readonly #decodeItem: (json: string) => unknown;

  constructor(decodeItem: (json: string) => unknown = JSON.parse) {
    this.#decodeItem = decodeItem;
  }

  /** Feeds the next chunk of the body. @throws SyntaxError from `JSON.parse` of an item. */
  push(chunk: Uint8Array | string): void {
    const buf =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.#bytes += buf.length;
    if (this.#whole) {
      this.#skeleton.push(buf);
      return;
    }
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    let inItems = this.#inItems;
    // what the item being read is: an object or array (ends when its bracket closes), a string (ends with its
    // closing quote) or a number/true/false/null (ends at the next comma, bracket or whitespace)
    let kind = this.#itemKind;
    // where the part of this chunk that belongs to the skeleton starts (-1: inside the items)
    let keepFrom = inItems ? -1 : 0;
    let itemStart = kind === NONE ? -1 : 0;
    const n = buf.length;
    let i = 0;
    // the next backslash at or after i (-1: none left in this chunk), searched again only once passed
    let b = buf.indexOf(BACKSLASH);
    while (i < n) {
      if (inString) {
        if (escaped) {
          escaped = false;
          i++;
          continue;
        }
        // jump to the next quote or backslash (memchr); most bytes of a reply are inside strings
        const q = buf.indexOf(QUOTE, i);
        if (b >= 0 && b < i) b = buf.indexOf(BACKSLASH, i);
        if (b >= 0 && (q < 0 || b < q)) {
          escaped = true;
          i = b + 1;
          continue;
        }
        if (q < 0) {
          i = n;
          break;
        }
        inString = false;
        i = q + 1;
        if (kind === STRING) {
          this.#item(buf, itemStart, i);
          itemStart = -1;
          kind = NONE;
        }
        continue;
      }
      const c = buf[i] as number;
      if (kind === SCALAR) {
        if (c === 0x2c || c === CLOSE_BRACKET || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
          this.#item(buf, itemStart, i);
          itemStart = -1;
          kind = NONE;
        } else {
          i++;
          continue;
        }
      }
      if (c === QUOTE) {
        inString = true;
        if (depth === 2 && inItems) {
          kind = STRING;
          itemStart = i;
        }
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        depth++;
        if (depth === 1 && c !== OPEN_BRACE) {
          // a top-level array: not a list reply
          this.#toWhole(buf);
          return;
        }
        if (depth === 2 && c === OPEN_BRACKET && !inItems && this.#afterItemsKey(buf, keepFrom, i)) {
          inItems = true;
          // keep the `[`; the items themselves are not part of the skeleton
          this.#skeleton.push(buf.subarray(keepFrom, i + 1));
          keepFrom = -1;
        } else if (depth === 3 && inItems) {
          kind = CONTAINER;
          itemStart = i;
        }
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (depth === 3 && kind === CONTAINER) {
          this.#item(buf, itemStart, i + 1);
          itemStart = -1;
          kind = NONE;
        } else if (depth === 2 && inItems && c === CLOSE_BRACKET) {
          inItems = false;
          keepFrom = i;
        }
        depth--;
      } else if (
        depth === 2 &&
        inItems &&
        c !== 0x2c &&
        c !== 0x20 &&
        c !== 0x0a &&
        c !== 0x0d &&
        c !== 0x09
      ) {
        kind = SCALAR;
        itemStart = i;
      }
      i++;
    }
    if (itemStart >= 0) this.#itemParts.push(buf.subarray(itemStart));
    if (keepFrom >= 0) this.#skeleton.push(buf.subarray(keepFrom));
    this.#itemKind = kind;
    this.#depth = depth;
    this.#inString = inString;
    this.#escaped = escaped;
    this.#inItems = inItems;
  }

  /** The decoded reply once the body has ended. @throws SyntaxError when the bytes are not one JSON value. */
  end(): unknown {
    const text = Buffer.concat(this.#skeleton).toString('utf8');
    if (this.#whole || !this.#itemsSeen) return text.trim() === '' ? undefined : JSON.parse(text);
    if (this.#depth !== 0 || this.#inString || this.#itemKind !== NONE)
      throw new SyntaxError('Unexpected end of JSON input');
    const list = JSON.parse(text) as { items: unknown };
    list.items = this.items;
    return list;
  }

  /** Bytes fed so far. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Whether the bytes before `at` (this chunk from `from`, then the skeleton's pieces backwards) end with the
   * key `"items"` and its colon, whitespace allowed around the colon.
   */
  #afterItemsKey(buf: Buffer, from: number, at: number): boolean {
    // 0: skipping whitespace before the colon; 1: after it, skipping whitespace; 2: matching the key backwards
    let phase = 0;
    let k = ITEMS_KEY.length - 1;
    const scan = (b: Buffer, lo: number, hi: number): boolean | undefined => {
      for (let j = hi - 1; j >= lo; j--) {
        const ch = b[j] as number;
        const space = ch === 0x20 || ch === 0x0a || ch === 0x0d || ch === 0x09;
        if (phase === 0) {
          if (space) continue;
          if (ch !== 0x3a) return false;
          phase = 1;
        } else if (phase === 1 && space) continue;
        else {
          phase = 2;
          if (ch !== ITEMS_KEY[k]) return false;
          if (k-- === 0) return true;
        }
      }
      return undefined;
    };
    let found = scan(buf, Math.max(from, 0), at);
    for (let p = this.#skeleton.length - 1; found === undefined && p >= 0; p--) {
      const piece = this.#skeleton[p] as Buffer;
      found = scan(piece, 0, piece.length);
    }
    if (found !== true) return false;
    if (this.#itemsSeen) throw new SyntaxError('the list reply has two items members');
    this.#itemsSeen = true;
    return true;
  }

  #item(buf: Buffer, start: number, end: number): void {
    let text: string;
    if (this.#itemParts.length > 0) {
      this.#itemParts.push(buf.subarray(start, end));
      text = Buffer.concat(this.#itemParts).toString('utf8');
      this.#itemParts = [];
    } else text = buf.toString('utf8', start, end);
    this.items.push(this.#decodeItem(text));
  }

  #toWhole(buf: Buffer): void {
    this.#whole = true;
    this.#skeleton.push(buf);
  }
}
