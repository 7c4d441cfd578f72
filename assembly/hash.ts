// xxh64 (XXH64 of the xxHash family, Yann Collet) over bytes in linear memory, and the string
// hash built on it. The host copies strings in as UTF-16LE (a memcpy-speed Buffer#write); the
// kernel hashes one of two byte views of the code units, narrowing with SIMD on the fly:
//   - every unit <= 0xFF (ASCII and Latin-1 text): XXH64(seed) of one byte per unit. For ASCII
//     that is the XXH64 of the UTF-8 bytes, the value any xxh64 library gives.
//   - otherwise the grouped view, under seed ^ UTF16_DOMAIN: the units in blocks of 32 and
//     groups of 256 blocks; each group is its blocks, each as one byte per unit or, when it
//     holds a unit above 0xFF, as its UTF-16LE bytes, followed by a 32-byte bitmap of its wide
//     blocks; the view ends with the unit count as a u64. Read from the end (count, then each
//     group's bitmap) the view decodes uniquely, so it is injective; one emoji costs its own
//     block 64 bytes, not the whole string twice the bytes; every piece but the last block is a
//     multiple of xxh64's 32-byte stripe, and the bitmap trailing its group lets the kernel
//     test, narrow and hash each block from one set of loads in a single pass.
// src/core/reference/xxh64.ts builds both views byte by byte: the twin and the definition.
import { E_BAD_LENGTH, E_BAD_OFFSETS } from "./errors";

const P1: u64 = 0x9E3779B185EBCA87;
const P2: u64 = 0xC2B2AE3D27D4EB4F;
const P3: u64 = 0x165667B19E3779F9;
const P4: u64 = 0x85EBCA77C2B2AE63;
const P5: u64 = 0x27D4EB2F165667C5;

/** Seed tweak of the UTF-16 view, so the two views never hash the same bytes alike. */
export const UTF16_DOMAIN: u64 = 0x9E3779B97F4A7C15;

const tail = memory.data(128, 16); // last block (<= 62 bytes) + bitmap + count
const flags = memory.data(32, 16);

// @ts-ignore: decorator
@inline function round(acc: u64, input: u64): u64 {
  acc += input * P2;
  acc = rotl<u64>(acc, 31);
  return acc * P1;
}

// @ts-ignore: decorator
@inline function mergeRound(acc: u64, val: u64): u64 {
  acc ^= round(0, val);
  return acc * P1 + P4;
}

// @ts-ignore: decorator
@inline function converge(v1: u64, v2: u64, v3: u64, v4: u64): u64 {
  let h = rotl<u64>(v1, 1) + rotl<u64>(v2, 7) + rotl<u64>(v3, 12) + rotl<u64>(v4, 18);
  h = mergeRound(h, v1);
  h = mergeRound(h, v2);
  h = mergeRound(h, v3);
  return mergeRound(h, v4);
}

/** The tail (< 32 bytes at p..end) and the avalanche, on h that already has the length added. */
function finish(h: u64, p: usize, end: usize): u64 {
  while (p + 8 <= end) {
    h ^= round(0, load<u64>(p));
    h = rotl<u64>(h, 27) * P1 + P4;
    p += 8;
  }
  if (p + 4 <= end) {
    h ^= <u64>load<u32>(p) * P1;
    h = rotl<u64>(h, 23) * P2 + P3;
    p += 4;
  }
  while (p < end) {
    h ^= <u64>load<u8>(p) * P5;
    h = rotl<u64>(h, 11) * P1;
    p++;
  }
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

/** XXH64 of `len` bytes at `ptr` with `seed`. */
export function xxh64(ptr: usize, len: usize, seed: u64): u64 {
  let p = ptr;
  const end = ptr + len;
  let h: u64;
  if (len >= 32) {
    const limit = end - 32;
    let v1 = seed + P1 + P2;
    let v2 = seed + P2;
    let v3 = seed;
    let v4 = seed - P1;
    do {
      v1 = round(v1, load<u64>(p));
      v2 = round(v2, load<u64>(p, 8));
      v3 = round(v3, load<u64>(p, 16));
      v4 = round(v4, load<u64>(p, 24));
      p += 32;
    } while (p <= limit);
    h = converge(v1, v2, v3, v4);
  } else {
    h = seed + P5;
  }
  return finish(h + <u64>len, p, end);
}

/**
 * XXH64 of the low bytes of `units` UTF-16 code units at p, or (false, 0) through the return
 * flag when a unit above 0xFF shows up (the caller then hashes the UTF-16 view).
 */
let latin1Ok = true;
function xxh64Latin1(ptr: usize, units: usize, seed: u64): u64 {
  latin1Ok = true;
  let p = ptr;
  const end = ptr + (units << 1);
  let h: u64;
  const high = i16x8.splat(<i16>0xff00);
  if (units >= 32) {
    const limit = end - 64;
    let v1 = seed + P1 + P2;
    let v2 = seed + P2;
    let v3 = seed;
    let v4 = seed - P1;
    do {
      const a = v128.load(p);
      const b = v128.load(p, 16);
      const c = v128.load(p, 32);
      const d = v128.load(p, 48);
      if (v128.any_true(v128.and(v128.or(v128.or(a, b), v128.or(c, d)), high))) {
        latin1Ok = false;
        return 0;
      }
      const n0 = i8x16.narrow_i16x8_u(a, b);
      const n1 = i8x16.narrow_i16x8_u(c, d);
      v1 = round(v1, i64x2.extract_lane(n0, 0));
      v2 = round(v2, i64x2.extract_lane(n0, 1));
      v3 = round(v3, i64x2.extract_lane(n1, 0));
      v4 = round(v4, i64x2.extract_lane(n1, 1));
      p += 64;
    } while (p <= limit);
    h = converge(v1, v2, v3, v4);
  } else {
    h = seed + P5;
  }
  // Fewer than 32 units left: narrow them into `tail` and finish there.
  const rem = (end - p) >> 1;
  if (rem != 0) {
    if (canOverRead(p)) {
      if (partialWide(p, rem)) {
        latin1Ok = false;
        return 0;
      }
      narrowBlock(p, tail);
    } else {
      for (let i: usize = 0; i < rem; i++) {
        const u = load<u16>(p + (i << 1));
        if (u > 0xff) {
          latin1Ok = false;
          return 0;
        }
        store<u8>(tail + i, <u8>u);
      }
    }
  }
  return finish(h + <u64>units, tail, tail + rem);
}

/**
 * Whether a whole 64-byte block can be loaded at p. A short last block is read with the same
 * four SIMD loads as a full one (the bytes past its end, the next string's or the arena's, are
 * masked off or ignored), which saves the scalar loop that dominates the cost of short strings;
 * only at the very end of linear memory does it fall back to the loop.
 */
// @ts-ignore: decorator
@inline function canOverRead(p: usize): bool {
  return p + 64 <= (<usize>memory.size() << 16);
}

/** Whether any of the first n (< 32) units of the block at q is above 0xFF. */
// @ts-ignore: decorator
@inline function partialWide(q: usize, n: usize): bool {
  const lim = i16x8.splat(<i16>n);
  const a = v128.and(v128.load(q), i16x8.lt_u(v128(0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0), lim));
  const b = v128.and(v128.load(q, 16), i16x8.lt_u(v128(8, 0, 9, 0, 10, 0, 11, 0, 12, 0, 13, 0, 14, 0, 15, 0), lim));
  const c = v128.and(v128.load(q, 32), i16x8.lt_u(v128(16, 0, 17, 0, 18, 0, 19, 0, 20, 0, 21, 0, 22, 0, 23, 0), lim));
  const d = v128.and(v128.load(q, 48), i16x8.lt_u(v128(24, 0, 25, 0, 26, 0, 27, 0, 28, 0, 29, 0, 30, 0, 31, 0), lim));
  return v128.any_true(v128.and(v128.or(v128.or(a, b), v128.or(c, d)), i16x8.splat(<i16>0xff00)));
}

/** The 32 units at q narrowed to 32 bytes at t (units above 0xFF saturate; callers know there are none that count). */
// @ts-ignore: decorator
@inline function narrowBlock(q: usize, t: usize): void {
  v128.store(t, i8x16.narrow_i16x8_u(v128.load(q), v128.load(q, 16)));
  v128.store(t, i8x16.narrow_i16x8_u(v128.load(q, 32), v128.load(q, 48)), 16);
}

/** Whether any of the 32 units of a block, loaded as a, c, d, e, is above 0xFF. */
// @ts-ignore: decorator
@inline function anyWide(a: v128, c: v128, d: v128, e: v128): bool {
  return v128.any_true(v128.and(v128.or(v128.or(a, c), v128.or(d, e)), i16x8.splat(<i16>0xff00)));
}

/** Marks the block `index` blocks into its group as wide in the group's bitmap (at `flags`). */
// @ts-ignore: decorator
@inline function markWide(index: usize): void {
  const at = flags + (index >> 3);
  store<u8>(at, load<u8>(at) | <u8>(<u32>1 << <u32>(index & 7)));
}

/**
 * Opens the tail with the last block, n (< 32) units at q, `index` blocks into its group: its
 * UTF-16LE bytes when it holds a unit above 0xFF (marked wide), one byte per unit otherwise.
 * Returns the tail's length, bytes.
 */
// @ts-ignore: decorator
@inline function openTail(q: usize, n: usize, index: usize): usize {
  const simd = canOverRead(q);
  let wide = false;
  if (simd) wide = partialWide(q, n);
  else for (let i: usize = 0; i < n; i++) if (load<u16>(q + (i << 1)) > 0xff) wide = true;
  let length: usize;
  if (wide) {
    markWide(index);
    memory.copy(tail, q, n << 1);
    length = n << 1;
  } else {
    if (simd) narrowBlock(q, tail);
    else for (let i: usize = 0; i < n; i++) store<u8>(tail + i, <u8>load<u16>(q + (i << 1)));
    length = n;
  }
  return length;
}

/**
 * The grouped view's end, from the lanes v1..v4 that took `fed` bytes of it: the unit count
 * appended to the tail (`tailLen` bytes so far), the tail's whole stripes fed to the lanes,
 * and the lanes converged and finished over the rest.
 */
// @ts-ignore: decorator
@inline function finishGrouped(v1: u64, v2: u64, v3: u64, v4: u64, fed: u64, tailLen: usize, units: usize): u64 {
  store<u64>(tail + tailLen, <u64>units);
  tailLen += 8;
  let t = tail;
  while (tailLen >= 32) {
    v1 = round(v1, load<u64>(t));
    v2 = round(v2, load<u64>(t, 8));
    v3 = round(v3, load<u64>(t, 16));
    v4 = round(v4, load<u64>(t, 24));
    fed += 32;
    t += 32;
    tailLen -= 32;
  }
  const h = converge(v1, v2, v3, v4) + fed + <u64>tailLen;
  return finish(h, t, t + tailLen);
}

/**
 * XXH64 of the grouped view (see the top of this file) of `units` code units at ptr: group by
 * group, each whole block tested, narrowed and fed in one pass, the last (short) block opening
 * the tail, and the group's bitmap fed after it (the last group's goes to the tail).
 */
function xxh64Grouped(ptr: usize, units: usize, seed: u64): u64 {
  let v1 = seed + P1 + P2;
  let v2 = seed + P2;
  let v3 = seed;
  let v4 = seed - P1;
  let fed: u64 = 0;
  let tailLen: usize = 0;
  const blocks = (units + 31) >> 5;
  const full = units >> 5;
  for (let g0: usize = 0; g0 < blocks; g0 += 256) {
    const gEnd = min(blocks, g0 + 256);
    const fullEnd = min(gEnd, full);
    v128.store(flags, i64x2.splat(0));
    v128.store(flags, i64x2.splat(0), 16);
    // One pass: the loads that test a block for wide units are the loads that narrow it.
    for (let b = g0; b < fullEnd; b++) {
      const q = ptr + (b << 6);
      const a = v128.load(q);
      const c = v128.load(q, 16);
      const d = v128.load(q, 32);
      const e = v128.load(q, 48);
      if (anyWide(a, c, d, e)) {
        markWide(b - g0);
        v1 = round(v1, i64x2.extract_lane(a, 0));
        v2 = round(v2, i64x2.extract_lane(a, 1));
        v3 = round(v3, i64x2.extract_lane(c, 0));
        v4 = round(v4, i64x2.extract_lane(c, 1));
        v1 = round(v1, i64x2.extract_lane(d, 0));
        v2 = round(v2, i64x2.extract_lane(d, 1));
        v3 = round(v3, i64x2.extract_lane(e, 0));
        v4 = round(v4, i64x2.extract_lane(e, 1));
        fed += 64;
      } else {
        const n0 = i8x16.narrow_i16x8_u(a, c);
        const n1 = i8x16.narrow_i16x8_u(d, e);
        v1 = round(v1, i64x2.extract_lane(n0, 0));
        v2 = round(v2, i64x2.extract_lane(n0, 1));
        v3 = round(v3, i64x2.extract_lane(n1, 0));
        v4 = round(v4, i64x2.extract_lane(n1, 1));
        fed += 32;
      }
    }
    // The last block, shorter than 32 units: its bytes open the tail.
    if (gEnd > fullEnd) tailLen = openTail(ptr + (full << 6), units & 31, full - g0);
    if (gEnd < blocks) {
      v1 = round(v1, load<u64>(flags));
      v2 = round(v2, load<u64>(flags, 8));
      v3 = round(v3, load<u64>(flags, 16));
      v4 = round(v4, load<u64>(flags, 24));
      fed += 32;
    } else {
      memory.copy(tail + tailLen, flags, 32);
      tailLen += 32;
    }
  }
  return finishGrouped(v1, v2, v3, v4, fed, tailLen, units);
}

/** The string hash of `units` UTF-16 code units at p (see the top of this file). */
export function hashString(p: usize, units: usize, seed: u64): u64 {
  const h = xxh64Latin1(p, units, seed);
  return latin1Ok ? h : xxh64Grouped(p, units, seed ^ UTF16_DOMAIN);
}

/**
 * Hashes `n` strings laid out in one arena: UTF-16LE code units back to back at `data`,
 * `offsets` n + 1 u32 byte offsets (item i is bytes [offsets[i], offsets[i + 1])); `out`
 * receives n u64 hashes.
 */
export function hashBatch(data: usize, offsets: usize, n: i32, seed: u64, out: usize): i32 {
  if (n < 0) return E_BAD_LENGTH;
  assert(((data | out) & 7) == 0, "hashBatch: data and out must be 8-byte aligned");
  let start = load<u32>(offsets);
  for (let i = 0; i < n; i++) {
    const end = load<u32>(offsets + ((<usize>i + 1) << 2));
    if (end < start || ((end - start) & 1) != 0) return E_BAD_OFFSETS;
    store<u64>(out + (<usize>i << 3), hashString(data + start, (end - start) >> 1, seed));
    start = end;
  }
  return n;
}
