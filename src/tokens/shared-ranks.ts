/**
 * One encoding's rank table packed into a SharedArrayBuffer: built once by the thread that starts
 * a pool of workers and read by all of them, where each worker would otherwise build its own
 * Map from the rank file (~0.1–0.2 s of CPU and ~25 MB of heap per worker for o200k_base).
 *
 * Layout (all 32-bit ints but the token bytes): a header [count, slot mask, bytes, room], then
 * each token's start in the bytes (room + 1), each token's rank (room), an open-addressing
 * table of token numbers + 1 by hash (0: empty; a power of two of slots, at most half full), and
 * the tokens' bytes end to end. A key is a token's bytes as a one-byte-per-char string (see
 * BpeCounter). A token listed twice keeps its later rank, as in js-tiktoken's table.
 *
 * Reads go through a per-thread memo (a Map of the keys asked, found or not), so the keys a
 * thread meets again and again (words, common pairs) cost a Map lookup as before, and only a new
 * key probes the shared table.
 */

/** Header ints: token count, slot mask, byte length, and the room for tokens the layout has (at least the count). */
const kHeader = 4;
/** Keys the per-thread memo holds before it starts over. */
const kMemoEntries = 1 << 17;

/** What BpeCounter reads of a rank table: a Map of token keys to ranks, or a SharedRanks. */
export interface RankLookup {
  get(key: string): number | undefined;
  has(key: string): boolean;
}

/** The tables of a packed buffer, as typed views over it. */
interface Views {
  count: number;
  mask: number;
  starts: Int32Array;
  ranks: Int32Array;
  slots: Int32Array;
  bytes: Uint8Array;
}

function viewsOf(buffer: SharedArrayBuffer, count: number, room: number, slots: number, byteLength: number): Views {
  let at = kHeader * 4;
  const ints = (n: number) => {
    const v = new Int32Array(buffer, at, n);
    at += n * 4;
    return v;
  };
  const starts = ints(room + 1);
  const ranks = ints(room);
  const table = ints(slots);
  return { count, mask: slots - 1, starts, ranks, slots: table, bytes: new Uint8Array(buffer, at, byteLength) };
}

/**
 * The slot of the token whose bytes are `src` from `at` for `length`: where it is in `v`, or the
 * empty slot where it would go (FNV-1a of the bytes, then the next slots in turn). The one probe
 * of packing and of lookups.
 */
function slotOf(v: Views, src: Uint8Array, at: number, length: number): number {
  const { mask, slots, starts, bytes } = v;
  let h = 0x811c9dc5;
  for (let i = 0; i < length; i++) h = Math.imul(h ^ src[at + i], 0x01000193);
  for (let s = (h >>> 0) & mask; ; s = (s + 1) & mask) {
    const t = slots[s];
    if (t === 0) return s;
    const start = starts[t - 1];
    if (starts[t] - start !== length) continue;
    let same = true;
    for (let i = 0; i < length && same; i++) same = bytes[start + i] === src[at + i];
    if (same) return s;
  }
}

/** A key's chars as bytes, in a buffer reused across lookups; undefined for a char past a byte (no token's key has one). */
let scratch = new Uint8Array(256);
function keyBytes(key: string): Uint8Array | undefined {
  if (scratch.length < key.length) scratch = new Uint8Array(key.length * 2);
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c > 0xff) return undefined;
    scratch[i] = c;
  }
  return scratch;
}

/** Base64's alphabet: a char code's six bits, or -1. */
const kBase64 = new Int8Array(128).fill(-1);
for (const [i, c] of [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].entries()) kBase64[c.charCodeAt(0)] = i;

/**
 * Fills a table token by token: each token's bytes are written where the bytes end, then kept
 * (or, for a token already there, only its rank taken: the later one, as a Map's set gives).
 * `room` and `byteLength` bound the tokens and their bytes (upper bounds will do).
 */
class Packer {
  readonly #buffer: SharedArrayBuffer;
  readonly #v: Views;
  readonly #room: number;
  #n = 0;
  #end = 0;

  constructor(room: number, byteLength: number) {
    let slots = 2;
    while (slots < 2 * room) slots *= 2;
    this.#buffer = new SharedArrayBuffer((kHeader + room + 1 + room + slots) * 4 + byteLength);
    this.#v = viewsOf(this.#buffer, room, room, slots, byteLength);
    this.#room = room;
  }

  /** Adds the token whose bytes are `text` from `from` to `to` in base64, and its rank. */
  addBase64(text: string, from: number, to: number, rank: number): void {
    while (to > from && text.charCodeAt(to - 1) === 61) to--; // "=" padding
    const length = ((to - from) * 3) >> 2;
    const at = this.#reserve(length);
    const bytes = this.#v.bytes;
    let bits = 0;
    let held = 0;
    let k = at;
    for (let i = from; i < to; i++) {
      const six = kBase64[text.charCodeAt(i)] ?? -1;
      if (six < 0) throw new RangeError(`packRankFile: not base64 at ${i}`);
      bits = (bits << 6) | six;
      held += 6;
      if (held >= 8) {
        held -= 8;
        bytes[k++] = (bits >> held) & 0xff;
      }
    }
    this.#keep(length, rank);
  }

  /** The packed table. */
  finish(): SharedArrayBuffer {
    const v = this.#v;
    new Int32Array(this.#buffer, 0, kHeader).set([this.#n, v.mask, v.bytes.length, this.#room]);
    return this.#buffer;
  }

  /** Where `length` more bytes go, checked against the room given. */
  #reserve(length: number): number {
    if (this.#n >= this.#room || this.#end + length > this.#v.bytes.length)
      throw new RangeError(`packRankFile: more tokens or bytes than the room given (${this.#room}, ${this.#v.bytes.length})`);
    return this.#end;
  }

  /** Keeps the token just written (`length` bytes at the end), or takes its rank for the same token already kept. */
  #keep(length: number, rank: number): void {
    const v = this.#v;
    const s = slotOf(v, v.bytes, this.#end, length);
    const t = v.slots[s];
    if (t !== 0) {
      v.ranks[t - 1] = rank;
      return;
    }
    v.starts[this.#n] = this.#end;
    v.ranks[this.#n] = rank;
    this.#n++;
    this.#end += length;
    v.starts[this.#n] = this.#end;
    v.slots[s] = this.#n;
  }
}

/**
 * Packs a js-tiktoken rank file's text (lines of `NAME OFFSET TOKEN…`, each token base64, its
 * rank the line's offset plus its place) straight into shared memory: no string per token is
 * made, so the packing thread's heap does not grow by the table.
 */
export function packRankFile(text: string): SharedArrayBuffer {
  let room = 0;
  for (let i = text.indexOf(" "); i >= 0; i = text.indexOf(" ", i + 1)) room++;
  const p = new Packer(room, (text.length * 3) >> 2);
  for (let line = 0; line < text.length; ) {
    let eol = text.indexOf("\n", line);
    if (eol < 0) eol = text.length;
    const name = text.indexOf(" ", line);
    if (name >= 0 && name < eol) {
      let at = text.indexOf(" ", name + 1);
      if (at < 0 || at > eol) at = eol;
      const offset = Number.parseInt(text.slice(name + 1, at), 10);
      for (let k = 0; at < eol; k++) {
        let next = text.indexOf(" ", at + 1);
        if (next < 0 || next > eol) next = eol;
        p.addBase64(text, at + 1, next, offset + k);
        at = next;
      }
    }
    line = eol + 1;
  }
  return p.finish();
}

/** A packed table (packRankFile), read through this thread's memo. */
export class SharedRanks implements RankLookup {
  readonly #v: Views;
  readonly #memo = new Map<string, number>();

  constructor(buffer: SharedArrayBuffer) {
    const [count, mask, byteLength, room] = new Int32Array(buffer, 0, kHeader);
    this.#v = viewsOf(buffer, count, room, mask + 1, byteLength);
  }

  /** Tokens in the table. */
  get size(): number {
    return this.#v.count;
  }

  get(key: string): number | undefined {
    let r = this.#memo.get(key);
    if (r === undefined) {
      const bytes = keyBytes(key);
      const t = bytes === undefined ? 0 : this.#v.slots[slotOf(this.#v, bytes, 0, key.length)];
      r = t === 0 ? -1 : this.#v.ranks[t - 1];
      if (this.#memo.size >= kMemoEntries) this.#memo.clear();
      this.#memo.set(key, r);
    }
    return r < 0 ? undefined : r;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }
}
