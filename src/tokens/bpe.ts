import { createRequire } from "node:module";
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
  readonly #ranks: Map<string, number>;
  readonly #pattern: RegExp;
  readonly #mergeMemo = new Map<string, number>();

  constructor(file: RankFile) {
    const ranks = new Map<string, number>();
    for (const line of file.bpe_ranks.split("\n")) {
      if (!line) continue;
      const fields = line.split(" ");
      const offset = Number.parseInt(fields[1], 10);
      // Later lines win for a token listed twice, as in js-tiktoken's table. atob gives the
      // bytes as a one-byte-per-char string directly: half the time of a Buffer per token, and
      // the table is built in every thread that counts (each batch worker).
      for (let i = 2; i < fields.length; i++) ranks.set(atob(fields[i]), offset + i - 2);
    }
    this.#ranks = ranks;
    this.#pattern = new RegExp(file.pat_str, "ug");
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

  /** #merge, remembered: pieces that are not one token (identifiers, paths, hex) repeat within a run. */
  #merged(bytes: string): number {
    let n = this.#mergeMemo.get(bytes);
    if (n === undefined) {
      if (this.#mergeMemo.size >= kMergeMemoEntries) this.#mergeMemo.clear();
      this.#mergeMemo.set(bytes, (n = bytes.length > kLongPiece ? this.#mergeLong(bytes) : this.#merge(bytes)));
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
   * #merge in O(n log n), for long pieces (a run of one letter, a base64 blob without digits or
   * punctuation) that would take the quadratic loop seconds: a heap of adjacent pairs by (rank,
   * start), so the pop is the lowest rank and the leftmost on a tie, exactly #merge's choice;
   * entries a merge made stale (their left part grew or their right part is gone) are skipped.
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
    const heap = new PairHeap();
    const push = (left: number): void => {
      const right = end[left];
      if (right >= n) return;
      const rank = ranks.get(bytes.slice(left, end[right]));
      if (rank !== undefined) heap.push(rank, left, end[right]);
    };
    for (let i = 0; i < n - 1; i++) push(i);
    let parts = n;
    while (heap.size > 0) {
      const { left, to } = heap.pop();
      const right = end[left];
      // Stale: `left` was absorbed by its left neighbour (end -1), or either part grew since.
      if (right < 0 || right >= n || end[right] !== to) continue;
      end[left] = to;
      if (to < n) prev[to] = left;
      end[right] = -1; // `right` is no part now
      parts--;
      push(left);
      if (left > 0) push(prev[left]);
    }
    return parts;
  }
}

/** Pieces longer than this merge through the heap. */
const kLongPiece = 256;

/** A binary min-heap of pairs (rank, left, to), ordered by rank and then by left. */
class PairHeap {
  #rank: number[] = [];
  #left: number[] = [];
  #to: number[] = [];
  get size(): number {
    return this.#rank.length;
  }
  #less(a: number, b: number): boolean {
    return this.#rank[a] < this.#rank[b] || (this.#rank[a] === this.#rank[b] && this.#left[a] < this.#left[b]);
  }
  #swap(a: number, b: number): void {
    for (const arr of [this.#rank, this.#left, this.#to]) [arr[a], arr[b]] = [arr[b], arr[a]];
  }
  push(rank: number, left: number, to: number): void {
    this.#rank.push(rank);
    this.#left.push(left);
    this.#to.push(to);
    for (let i = this.#rank.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!this.#less(i, parent)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }
  pop(): { left: number; to: number } {
    const top = { left: this.#left[0], to: this.#to[0] };
    const last = this.#rank.length - 1;
    this.#swap(0, last);
    this.#rank.pop();
    this.#left.pop();
    this.#to.pop();
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < last && this.#less(l, m)) m = l;
      if (r < last && this.#less(r, m)) m = r;
      if (m === i) break;
      this.#swap(i, m);
      i = m;
    }
    return top;
  }
}

/** Merged pieces remembered before the memo starts over (~5 MB at most). */
const kMergeMemoEntries = 1 << 16;
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

let starts = new Int32Array(256);
let pairRanks = new Float64Array(256);
const scratchStarts = (n: number): Int32Array => (starts.length >= n ? starts : (starts = new Int32Array(n * 2)));
const scratchRanks = (n: number): Float64Array => (pairRanks.length >= n ? pairRanks : (pairRanks = new Float64Array(n * 2)));

const counters = new Map<Encoding, BpeCounter>();

/** The exact counter of one encoding, built on first use and shared by every TokenCounter in the thread. */
export function bpeCounter(encoding: Encoding): BpeCounter {
  let c = counters.get(encoding);
  if (!c) {
    const file = require(`js-tiktoken/ranks/${encoding}`) as RankFile & { default?: RankFile };
    c = new BpeCounter(file.default ?? file);
    counters.set(encoding, c);
  }
  return c;
}
