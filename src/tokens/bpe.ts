import { createRequire } from "node:module";
import { nextTurn } from "../event-loop.js";
import { packRankFile, SharedRanks, type RankLookup } from "./shared-ranks.js";
import type { Encoding } from "./weights-table.js";

/** The shape of js-tiktoken's rank files (`js-tiktoken/ranks/<encoding>`). */
interface RankFile {
  pat_str: string;
  bpe_ranks: string;
}

const require = createRequire(import.meta.url);

/**
 * Exact token counts for a tiktoken encoding: the same pre-tokenising pattern and byte-pair
 * merges as js-tiktoken (whose rank files it reads), counting instead of encoding. Special
 * tokens in the text are ordinary text, as `encode(text, [], [])` treats them.
 *
 * Why not js-tiktoken's own `encode`: its rank table keys every token by its bytes joined with
 * commas ("104,101,108") in two maps, which costs ~140 MB and ~0.7 s to build for o200k in
 * every thread that counts (each batch worker), and every merge step joins byte arrays into
 * such keys. Here a token's key is its bytes as a one-byte-per-char ("latin1") string, so an
 * ASCII piece is its own key with no conversion, the table is one Map (~15 MB), and a merge step
 * is a substring and a lookup. The differential test (test/tokens/bpe.test.ts) holds the counts
 * equal to js-tiktoken's on the dev corpus and on edge cases.
 */
export class BpeCounter {
  readonly #ranks: RankLookup;
  readonly #pattern: RegExp;
  readonly #mergeMemo = new Map<string, number>();
  /** @internal Elementary steps the long-piece merge took in this thread, every counter's (a test holds them linear in the piece's length). */
  get longMergeWork(): number {
    return longWork;
  }

  /** The counter of a rank table built whole (RankTable, or another thread's packed one), with its encoding's pre-tokenising pattern. */
  constructor(ranks: RankLookup, patStr: string) {
    this.#ranks = ranks;
    this.#pattern = new RegExp(patStr, "ug");
  }

  /** Tokens of `text` (an empty text has none). */
  count(text: string): number {
    let n = 0;
    const pattern = this.#pattern;
    pattern.lastIndex = 0;
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      const piece = m[0];
      // \x00-\x7f: the piece's UTF-8 bytes are its chars, so it is its own key.
      const bytes = isAscii(piece) ? piece : Buffer.from(piece, "utf8").toString("latin1");
      n += bytes.length === 1 || this.#ranks.has(bytes) ? 1 : this.#merged(bytes);
    }
    return n;
  }

  /** @internal Pieces the merge memo holds. */
  get rememberedPieces(): number {
    return this.#mergeMemo.size;
  }

  /**
   * #merge, remembered: pieces that are not one token (identifiers, paths, hex) repeat within a
   * run. A long piece is merged afresh each time (in linear steps): remembering it would keep its
   * whole text alive, and TokenCounter already remembers the count of each text it counts.
   */
  #merged(bytes: string): number {
    if (bytes.length > kLongPiece) return this.#mergeLong(bytes);
    let n = this.#mergeMemo.get(bytes);
    if (n === undefined) {
      if (this.#mergeMemo.size >= kMergeMemoEntries) this.#mergeMemo.clear();
      this.#mergeMemo.set(bytes, (n = this.#merge(bytes)));
    }
    return n;
  }

  /**
   * How many tokens byte-pair merging leaves of `bytes`: repeatedly merge the adjacent pair
   * whose joined bytes have the lowest rank (the leftmost on a tie), as tiktoken does, until no
   * adjacent pair is a token. O(n²) in the piece's length, like tiktoken's own small-piece path:
   * the fastest for the usual pieces (words, numbers of ≤3 digits, runs of punctuation).
   */
  #merge(bytes: string): number {
    const ranks = this.#ranks;
    let parts = bytes.length;
    const start = scratchStarts(parts + 1);
    const rank = scratchRanks(parts);
    for (let i = 0; i <= parts; i++) start[i] = i;
    for (let i = 0; i < parts - 1; i++) rank[i] = ranks.get(bytes.slice(i, i + 2)) ?? Infinity;
    while (parts > 1) {
      let best = Infinity;
      let at = -1;
      for (let i = 0; i < parts - 1; i++) {
        if (rank[i] < best) {
          best = rank[i];
          at = i;
        }
      }
      if (at < 0) break;
      // Part at+1 joins part at: drop its start and the pair rank that began at it.
      start.copyWithin(at + 1, at + 2, parts + 1);
      rank.copyWithin(at + 1, at + 2, parts - 1);
      parts--;
      if (at < parts - 1) rank[at] = ranks.get(bytes.slice(start[at], start[at + 2])) ?? Infinity;
      if (at > 0) rank[at - 1] = ranks.get(bytes.slice(start[at - 1], start[at + 1])) ?? Infinity;
    }
    return parts;
  }

  /**
   * #merge in linear time, for long pieces (a run of one letter, a base64 blob without digits
   * or punctuation) that would take the quadratic loop seconds. Adjacent pairs wait in buckets
   * by rank; the lowest rank's bucket is taken whole, its pairs merged leftmost first, exactly
   * #merge's choice. A merge makes a token of the bucket's rank, and a pair holding that
   * token is a longer token, so its rank is another: a bucket never grows while it is taken,
   * and the few pairs that rank below it (a token also spelled from a later-made part) stop the
   * pass, which then resumes from the lowest rank again. Entries a merge made stale (their left
   * part grew or their right part is gone) are skipped. A bucket is sorted only when filled out
   * of order (rarely: pairs arrive left to right, pass after pass), so a piece costs steps in
   * proportion to its length where a heap of all its pairs cost a log factor more, and its
   * scattered reads and writes over megabytes of entries much more than that.
   */
  #mergeLong(bytes: string): number {
    const ranks = this.#ranks;
    const n = bytes.length;
    // Parts by the index of their first byte: where they end, and their left neighbour (-1 none).
    const end = new Int32Array(n);
    const prev = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      end[i] = i + 1;
      prev[i] = i - 1;
    }
    const queue = new RankBuckets();
    const push = (left: number): void => {
      const right = end[left];
      if (right >= n) return;
      const rank = ranks.get(bytes.slice(left, end[right]));
      if (rank !== undefined) queue.push(rank, left, end[right]);
    };
    for (let i = 0; i < n - 1; i++) push(i);
    let parts = n;
    for (let bucket = queue.take(); bucket !== undefined; bucket = queue.take()) {
      const { rank, entries } = bucket;
      for (let j = 0; j < entries.length; j++) {
        longWork++;
        const left = Math.floor(entries[j] / kSpan);
        const to = left + (entries[j] % kSpan);
        const right = end[left];
        // Stale: `left` was absorbed by its left neighbour (end -1), or either part grew since.
        if (right < 0 || right >= n || end[right] !== to) continue;
        end[left] = to;
        if (to < n) prev[to] = left;
        end[right] = -1; // `right` is no part now
        parts--;
        push(left);
        if (left > 0) push(prev[left]);
        if (queue.lowest < rank) {
          queue.putBack(rank, entries, j + 1);
          break;
        }
      }
    }
    return parts;
  }
}

let longWork = 0;

/** Pieces longer than this merge through the buckets. */
const kLongPiece = 256;
/** A pair's entry: its left part's index × kSpan + its length (a pair of two tokens is far shorter). */
const kSpan = 1 << 16;

/**
 * Pairs waiting to merge, in buckets by rank: `take` hands over the lowest rank's bucket, its
 * entries (left × kSpan + length) in left order. The ranks with a bucket sit in a min-heap, each
 * once, so a piece's steps grow with its pairs, not with the vocabulary.
 */
class RankBuckets {
  readonly #buckets = new Map<number, number[]>();
  /** Ranks that have a bucket, as a binary min-heap. */
  readonly #heap: number[] = [];

  /** The lowest rank waiting (Infinity: none). */
  get lowest(): number {
    return this.#heap.length === 0 ? Infinity : this.#heap[0]!;
  }

  push(rank: number, left: number, to: number): void {
    longWork++;
    const b = this.#buckets.get(rank);
    if (b) b.push(left * kSpan + (to - left));
    else this.#open(rank, [left * kSpan + (to - left)]);
  }

  /** Entries [from, …) of a bucket taken but not finished go back (with any that came for its rank since). */
  putBack(rank: number, entries: number[], from: number): void {
    if (from >= entries.length) return;
    const rest = entries.slice(from);
    const b = this.#buckets.get(rank);
    if (b) for (const e of rest) b.push(e);
    else this.#open(rank, rest);
  }

  /** The lowest rank's bucket, its entries in left order; undefined when none waits. */
  take(): { rank: number; entries: number[] } | undefined {
    if (this.#heap.length === 0) return undefined;
    const rank = this.#popRank();
    const entries = this.#buckets.get(rank)!;
    this.#buckets.delete(rank);
    let sorted = true;
    for (let i = 1; i < entries.length && sorted; i++) sorted = entries[i - 1]! <= entries[i]!;
    longWork += entries.length;
    if (!sorted) {
      longWork += entries.length * Math.ceil(Math.log2(entries.length));
      return { rank, entries: Array.from(Float64Array.from(entries).sort()) };
    }
    return { rank, entries };
  }

  #open(rank: number, entries: number[]): void {
    this.#buckets.set(rank, entries);
    const h = this.#heap;
    h.push(rank);
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (h[parent]! <= rank) break;
      h[i] = h[parent]!;
      h[parent] = rank;
      i = parent;
    }
  }

  #popRank(): number {
    const h = this.#heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length === 0) return top;
    h[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l]! < h[m]!) m = l;
      if (r < h.length && h[r]! < h[m]!) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
    return top;
  }
}

/** Merged pieces remembered before the memo starts over (each at most kLongPiece bytes: ~5 MB at most). */
const kMergeMemoEntries = 1 << 16;
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

let starts = new Int32Array(256);
let pairRanks = new Float64Array(256);
const scratchStarts = (n: number): Int32Array => (starts.length >= n ? starts : (starts = new Int32Array(n * 2)));
const scratchRanks = (n: number): Float64Array => (pairRanks.length >= n ? pairRanks : (pairRanks = new Float64Array(n * 2)));

/** Tokens a warm-up adds to the table between two turns of the event loop (a few ms each). */
const kTokensPerSlice = 8192;

/**
 * One encoding's rank table, built from js-tiktoken's rank file a slice of tokens at a time:
 * whole at once by the first exact count, or across turns of the event loop by a warm-up, which
 * a count arriving meanwhile finishes. A rank file is lines of `NAME OFFSET TOKEN…` (o200k_base's
 * is one line of 200,000 tokens), each token base64, its rank the line's offset plus its place.
 */
class RankTable {
  readonly ranks = new Map<string, number>();
  readonly patStr: string;
  readonly #lines: string[];
  /** The line being read, its fields, and the next field to add. */
  #line = 0;
  #fields: string[] | undefined;
  #field = 2;

  constructor(encoding: Encoding) {
    const file = rankFileOf(encoding);
    this.#lines = file.bpe_ranks.split("\n");
    this.patStr = file.pat_str;
  }

  get done(): boolean {
    return this.#line >= this.#lines.length;
  }

  /** Adds up to `n` more tokens. Later entries win for a token listed twice, as in js-tiktoken's table. */
  addTokens(n: number): void {
    let left = n;
    while (left > 0 && !this.done) {
      const fields = (this.#fields ??= this.#lines[this.#line].split(" "));
      const offset = Number.parseInt(fields[1], 10);
      const end = Math.max(this.#field, Math.min(fields.length, this.#field + left));
      // atob gives the bytes as a one-byte-per-char string directly: half the time of a Buffer
      // per token, and the table is built in every thread that counts (each batch worker).
      for (let i = this.#field; i < end; i++) this.ranks.set(atob(fields[i]), offset + i - 2);
      left -= end - this.#field;
      this.#field = end;
      if (end >= fields.length) {
        this.#line++;
        this.#fields = undefined;
        this.#field = 2;
      }
    }
  }
}

/** One encoding's rank file, as js-tiktoken ships it. */
function rankFileOf(encoding: Encoding): RankFile {
  const file = require(`js-tiktoken/ranks/${encoding}`) as RankFile & { default?: RankFile };
  return file.default ?? file;
}

const counters = new Map<Encoding, BpeCounter>();
const tables = new Map<Encoding, RankTable>();
const warmups = new Map<Encoding, Promise<void>>();

const tableOf = (encoding: Encoding): RankTable => {
  let t = tables.get(encoding);
  if (!t) tables.set(encoding, (t = new RankTable(encoding)));
  return t;
};

/** The exact counter of one encoding, built on first use (or finished, after a warm-up began) and shared by every TokenCounter in the thread. */
export function bpeCounter(encoding: Encoding): BpeCounter {
  let c = counters.get(encoding);
  if (!c) {
    const table = tableOf(encoding);
    table.addTokens(Number.POSITIVE_INFINITY);
    c = new BpeCounter(table.ranks, table.patStr);
    counters.set(encoding, c);
    tables.delete(encoding);
  }
  return c;
}

/**
 * Builds one encoding's exact counter ahead of need, a slice of its rank table per turn of the
 * event loop, so a latency-sensitive call that counts exactly later finds it ready instead of
 * building it inside the call (~0.3–0.7 s for o200k_base). Resolves when it is ready; an exact
 * count made meanwhile finishes the table itself.
 */
export function warmupBpe(encoding: Encoding): Promise<void> {
  if (counters.has(encoding)) return Promise.resolve();
  let w = warmups.get(encoding);
  if (!w) {
    w = (async () => {
      await nextTurn();
      while (!counters.has(encoding)) {
        const table = tableOf(encoding);
        if (table.done) bpeCounter(encoding);
        else table.addTokens(kTokensPerSlice);
        await nextTurn();
      }
    })().finally(() => warmups.delete(encoding));
    warmups.set(encoding, w);
  }
  return w;
}

/** One encoding's rank table packed for other threads (shared-ranks.ts), and its pre-tokenising pattern. */
export interface SharedRankTable {
  encoding: Encoding;
  buffer: SharedArrayBuffer;
  patStr: string;
}

const packed = new Map<Encoding, SharedRankTable>();

/**
 * The rank table of `encoding` packed into shared memory for the workers of a pool, made once
 * per thread straight from the rank file: this thread builds no Map of it (~25 MB for
 * o200k_base) unless it counts exactly itself.
 */
export function packRankTable(encoding: Encoding): SharedRankTable {
  let table = packed.get(encoding);
  if (!table) {
    const file = rankFileOf(encoding);
    table = { encoding, buffer: packRankFile(file.bpe_ranks), patStr: file.pat_str };
    packed.set(encoding, table);
  }
  return table;
}

/** The encodings whose exact counter in this thread reads another thread's packed table. */
const adopted = new Set<Encoding>();

/** @internal Whether this thread's exact counter of `encoding` reads a table another thread packed (adoptRankTable). */
export function readsPackedTable(encoding: Encoding): boolean {
  return adopted.has(encoding);
}

/**
 * This thread's exact counter of `table.encoding` reads `table` (another thread's, packRankTable)
 * instead of building a table of its own; counts are the same. Nothing changes where this thread
 * has its counter already.
 */
export function adoptRankTable(table: SharedRankTable): void {
  if (counters.has(table.encoding)) return;
  counters.set(table.encoding, new BpeCounter(new SharedRanks(table.buffer), table.patStr));
  tables.delete(table.encoding);
  adopted.add(table.encoding);
}
