import { E_BAD_LENGTH, E_BAD_OFFSETS, E_BAD_TERM } from "./errors";
import { WORD_RANGES, WORD_RANGE_COUNT } from "./word-chars.generated";

/** Bit 0 of a term's flag byte: a word character right before a match rejects it. */
export const TERM_WORD_START: u8 = 1;
/** Bit 1 of a term's flag byte: a word character right after a match rejects it. */
export const TERM_WORD_END: u8 = 2;

const BUCKETS: u32 = 4096;
const BITMAP_BYTES: usize = 8192;
const HEADS_BYTES: usize = <usize>BUCKETS << 2;

/** Scratch bytes termLines needs for `m` terms (its tables), or a negative E_* code. */
export function termLinesScratch(m: i32): i32 {
  if (m < 0) return E_BAD_LENGTH;
  return <i32>(BITMAP_BYTES + HEADS_BYTES) + (m << 3);
}

// @ts-ignore: decorator
@inline function bucketOf(key: u32): u32 {
  return (key * 0x9e3779b1) >> 20;
}

/** Whether a code point is a word character (letter, digit, `_`); outside the BMP never (a surrogate in UTF-16). */
function isWordCodePoint(cp: u32): bool {
  if (cp < 0x80) return (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) || cp == 0x5f;
  if (cp >= 0x10000) return false;
  let lo: i32 = 0;
  let hi: i32 = WORD_RANGE_COUNT;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (unchecked(WORD_RANGES[mid << 1 | 1]) <= cp) lo = mid + 1;
    else hi = mid;
  }
  return lo < WORD_RANGE_COUNT && unchecked(WORD_RANGES[lo << 1]) <= cp;
}

/** The code point whose UTF-8 sequence starts at `p` (a 4-byte one as 0x10000: only "not BMP" matters). */
function codePointAt(p: usize, end: usize): u32 {
  const b = <u32>load<u8>(p);
  if (b < 0x80) return b;
  if (b >= 0xf0) return 0x10000;
  if (b >= 0xe0) {
    if (p + 2 >= end) return 0xfffd;
    return ((b & 0x0f) << 12) | ((<u32>load<u8>(p + 1) & 0x3f) << 6) | (<u32>load<u8>(p + 2) & 0x3f);
  }
  if (p + 1 >= end) return 0xfffd;
  return ((b & 0x1f) << 6) | (<u32>load<u8>(p + 1) & 0x3f);
}

/** The code point whose UTF-8 sequence ends right before `p` (never before `start`). */
function codePointBefore(p: usize, start: usize): u32 {
  let q = p - 1;
  while (q > start && p - q < 4 && (load<u8>(q) & 0xc0) == 0x80) q--;
  return codePointAt(q, p);
}

/**
 * The lines of each text that contain a term as a whole, with how many distinct terms each
 * holds. Texts are UTF-8 at `data` (u32 byte offsets, n + 1 of them); terms are UTF-8 at
 * `terms` (u32 offsets, m + 1), each at least 2 bytes, distinct, without a newline, with a flag
 * byte each at `flags` (TERM_WORD_START, TERM_WORD_END: the boundary rule of containsTerm,
 * src/model/terms.ts, decided by the host from the term's first and last UTF-16 unit). Lines
 * are split on `\n` and counted from 0 per text. Writes (line, distinct terms) pairs as u32 to
 * `out`, line order, text after text, and after text i the pairs written so far to `ends`;
 * when `found` is not 0, also sets byte k of `found` (m bytes, zeroed here) to 1 for each term k
 * found in some text. `scratch` holds termLinesScratch(m) bytes. Returns the pair count, or a
 * negative E_* code.
 *
 * One pass per text whatever the term count: a bitmap of the terms' first two bytes rejects
 * most positions with one load; the rest compare the terms chained under a hash of those bytes.
 */
export function termLines(
  data: usize, offsets: usize, n: i32,
  terms: usize, termOffsets: usize, flags: usize, m: i32,
  scratch: usize, out: usize, ends: usize, found: usize,
): i32 {
  if (n < 0 || m < 0) return E_BAD_LENGTH;
  if (found != 0) memory.fill(found, 0, <usize>m);
  const bitmap = scratch;
  const heads = scratch + BITMAP_BYTES;
  const next = heads + HEADS_BYTES;
  const stamps = next + (<usize>m << 2);
  memory.fill(scratch, 0, BITMAP_BYTES + HEADS_BYTES + (<usize>m << 3));
  for (let t = 0; t < m; t++) {
    const a = load<u32>(termOffsets + (<usize>t << 2));
    const b = load<u32>(termOffsets + (<usize>(t + 1) << 2));
    if (b < a) return E_BAD_OFFSETS;
    if (b - a < 2) return E_BAD_TERM;
    const key = <u32>load<u16>(terms + a);
    const bit = bitmap + (key >> 3);
    store<u8>(bit, load<u8>(bit) | (<u8>1 << <u8>(key & 7)));
    const h = heads + (<usize>bucketOf(key) << 2);
    store<u32>(next + (<usize>t << 2), load<u32>(h));
    store<u32>(h, <u32>t + 1);
  }
  let pairs: u32 = 0;
  let stamp: u32 = 0;
  for (let i = 0; i < n; i++) {
    const s = load<u32>(offsets + (<usize>i << 2));
    const e = load<u32>(offsets + (<usize>(i + 1) << 2));
    if (e < s) return E_BAD_OFFSETS;
    const start = data + s;
    const end = data + e;
    let line: u32 = 0;
    let count: u32 = 0;
    stamp++;
    for (let p = start; p < end; p++) {
      if (load<u8>(p) == 0x0a) {
        if (count > 0) {
          store<u32>(out + (<usize>pairs << 3), line);
          store<u32>(out + (<usize>pairs << 3) + 4, count);
          pairs++;
          count = 0;
        }
        line++;
        stamp++;
        continue;
      }
      if (p + 1 >= end) break;
      const key = <u32>load<u16>(p);
      if ((<u32>load<u8>(bitmap + (key >> 3)) & (<u32>1 << (key & 7))) == 0) continue;
      let t = load<u32>(heads + (<usize>bucketOf(key) << 2));
      while (t != 0) {
        const k = t - 1;
        t = load<u32>(next + (<usize>k << 2));
        if (load<u32>(stamps + (<usize>k << 2)) == stamp) continue;
        const a = load<u32>(termOffsets + (<usize>k << 2));
        const len = <usize>(load<u32>(termOffsets + (<usize>(k + 1) << 2)) - a);
        if (p + len > end || memory.compare(p, terms + a, len) != 0) continue;
        const f = load<u8>(flags + k);
        if ((f & TERM_WORD_START) != 0 && p > start && isWordCodePoint(codePointBefore(p, start))) continue;
        if ((f & TERM_WORD_END) != 0 && p + len < end && isWordCodePoint(codePointAt(p + len, end))) continue;
        store<u32>(stamps + (<usize>k << 2), stamp);
        if (found != 0) store<u8>(found + k, 1);
        count++;
      }
    }
    if (count > 0) {
      store<u32>(out + (<usize>pairs << 3), line);
      store<u32>(out + (<usize>pairs << 3) + 4, count);
      pairs++;
    }
    store<u32>(ends + (<usize>i << 2), pairs);
  }
  return <i32>pairs;
}
