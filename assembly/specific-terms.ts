import { E_BAD_LENGTH, E_BAD_OFFSETS } from "./errors";

// Specific terms (src/model/terms.ts) of ASCII texts, by character codes: the candidates the
// module comment there defines, judged as isSpecificAscii judges them, distinct, in order of
// first occurrence. The TypeScript scan there (scanAscii, isSpecificAscii) is this kernel's twin.

// @ts-ignore: decorator
@inline function isDigit(c: u32): bool {
  return c - 0x30 < 10;
}
// @ts-ignore: decorator
@inline function isUpper(c: u32): bool {
  return c - 0x41 < 26;
}
// @ts-ignore: decorator
@inline function isLower(c: u32): bool {
  return c - 0x61 < 26;
}
/** A code that may start or end a candidate: a letter, a digit, `_` or `$`. */
// @ts-ignore: decorator
@inline function isEdge(c: u32): bool {
  return isDigit(c) || isUpper(c) || isLower(c) || c == 0x5f || c == 0x24;
}
/** A code that may sit inside a candidate: an edge code, `.`, `/`, `\` or `-`. */
// @ts-ignore: decorator
@inline function isInner(c: u32): bool {
  return isEdge(c) || c == 0x2e || c == 0x2f || c == 0x5c || c == 0x2d;
}

/** The unit at index i of the text at `t` with `n` units, or 0xffffffff past its end. */
// @ts-ignore: decorator
@inline function at(t: usize, n: usize, i: usize): u32 {
  return i < n ? <u32>load<u16>(t + (i << 1)) : 0xffffffff;
}

/** Whether any of the n units at t is above 0x7f. */
function hasNonAscii(t: usize, n: usize): bool {
  let i: usize = 0;
  const high = i16x8.splat(0x7f);
  for (; i + 8 <= n; i += 8) {
    if (v128.any_true(i16x8.gt_u(v128.load(t + (i << 1)), high))) return true;
  }
  for (; i < n; i++) if (load<u16>(t + (i << 1)) > 0x7f) return true;
  return false;
}

/** isSpecificAscii of the candidate of `n` units at `c` (rule for rule; see src/model/terms.ts). */
function isSpecific(c: usize, n: usize): bool {
  if (n < 3) return false;
  // Lower-case letters only are never specific.
  let i: usize = 0;
  while (i < n && isLower(at(c, n, i))) i++;
  if (i == n) return false;
  const c0 = at(c, n, 0);
  // A number: [+-]?\d[\d.,eE+-]*.
  const s: usize = c0 == 0x2b || c0 == 0x2d ? 1 : 0;
  if (s < n && isDigit(at(c, n, s))) {
    let number = true;
    for (let k = s + 1; k < n && number; k++) {
      const d = at(c, n, k);
      number = isDigit(d) || d == 0x2e || d == 0x2c || d == 0x65 || d == 0x45 || d == 0x2b || d == 0x2d;
    }
    if (number) return true;
  }
  // Single letters joined by dots.
  if ((n & 1) == 1) {
    let initials = true;
    for (let k: usize = 0; k < n && initials; k++) {
      const d = at(c, n, k);
      initials = (k & 1) == 0 ? isUpper(d) || isLower(d) : d == 0x2e;
    }
    if (initials) return false;
  }
  const c1 = at(c, n, 1);
  let lead: usize = 0;
  if (c0 == 0x2e) lead = c1 == 0x2e && at(c, n, 2) == 0x2f ? 3 : c1 == 0x2f ? 2 : 0;
  else if (c0 == 0x7e) lead = c1 == 0x2f ? 2 : 0;
  else if (c0 == 0x2f) lead = 1;
  else if (c0 == 0x2d) lead = c1 == 0x2d ? 2 : 1;
  let letter = false;
  let digit = false;
  let flagMark = false;
  for (let k: usize = 1; k < n; k++) {
    const d = at(c, n, k);
    if (isUpper(d) || isLower(d)) letter = true;
    else if (isDigit(d)) digit = true;
    if (d == 0x2d || d == 0x5f || isDigit(d)) flagMark = true;
  }
  if (lead == 1 && c0 == 0x2d) return letter && flagMark;
  if (lead > 0) return n - lead >= 2;
  letter = letter || isUpper(c0) || isLower(c0);
  digit = digit || isDigit(c0);
  for (let k: usize = 0; k < n; k++) {
    const d = at(c, n, k);
    if (d == 0x2f || d == 0x2e || d == 0x5c || d == 0x5f || d == 0x24 || (d == 0x3a && at(c, n, k + 1) == 0x3a)) return true;
  }
  if (letter && digit) return true;
  for (let k: usize = 0; k + 1 < n; k++) {
    const d = at(c, n, k);
    const e = at(c, n, k + 1);
    if (isLower(d) && isUpper(e)) return true;
    if (isUpper(d) && isUpper(e) && k + 2 < n && isLower(at(c, n, k + 2))) return true;
  }
  return false;
}

// @ts-ignore: decorator
@inline function hashUnits(c: usize, n: usize): u32 {
  let h: u32 = 0x811c9dc5;
  for (let k: usize = 0; k < n; k++) h = (h ^ <u32>load<u16>(c + (k << 1))) * 0x01000193;
  return h;
}

/**
 * The table's size for a text of `len` units: the least power of two from 16 that reaches `len`
 * (the text holds at most len / 2 terms, so the table stays at most half full), or `slots`.
 */
// @ts-ignore: decorator
@inline function tableSize(len: usize, slots: u32): u32 {
  let size: u32 = 16;
  while (size < slots && <usize>size < len) size <<= 1;
  return size;
}

/**
 * Where the edge code that starts a candidate at p must be: past a path's or a flag's lead
 * (`../`, `./`, `~/`, `/`, `--` before an edge code, `-`), at p otherwise; `len` (past the end:
 * no candidate) for a `.` or `~` that leads no path.
 */
// @ts-ignore: decorator
@inline function leadEnd(t: usize, len: usize, p: usize): usize {
  const c = at(t, len, p);
  if (c == 0x2e) {
    if (at(t, len, p + 1) == 0x2e && at(t, len, p + 2) == 0x2f) return p + 3;
    if (at(t, len, p + 1) == 0x2f) return p + 2;
    return len;
  }
  if (c == 0x7e) return at(t, len, p + 1) == 0x2f ? p + 2 : len;
  if (c == 0x2f) return p + 1;
  if (c == 0x2d) return at(t, len, p + 1) == 0x2d && isEdge(at(t, len, p + 2)) ? p + 2 : p + 1;
  return p;
}

/** Set by candidateLast: whether the candidate's run up to its last edge code is lower-case letters alone. */
let lowerOnly = false;

/**
 * The index of a candidate's last edge code, its run read from the edge code at q over inner
 * codes and `::`; sets lowerOnly (a candidate of those alone is a word of prose).
 */
// @ts-ignore: decorator
@inline function candidateLast(t: usize, len: usize, q: usize): usize {
  let last = q;
  // Where the run stops being lower-case letters.
  let upper = isLower(<u32>load<u16>(t + (q << 1))) ? len : q;
  for (let k = q + 1; k < len; ) {
    const d = <u32>load<u16>(t + (k << 1));
    if (isInner(d)) {
      if (isEdge(d)) last = k;
      if (upper == len && !isLower(d)) upper = k;
      k++;
    } else if (d == 0x3a && at(t, len, k + 1) == 0x3a) {
      if (upper == len) upper = k;
      k += 2;
    } else break;
  }
  lowerOnly = upper > last;
  return last;
}

/**
 * The slot of `table` (mask + 1 slots, each 0 or a term's index in this text plus 1) for the
 * term of `units` units at c0, or -1 when this text's terms so far (pairs from `first` at `out`,
 * offsets into the text at t) hold it already.
 */
// @ts-ignore: decorator
@inline function termSlot(table: usize, mask: u32, t: usize, c0: usize, units: usize, out: usize, first: u32): i32 {
  let slot = hashUnits(c0, units) & mask;
  for (;;) {
    const k = load<u32>(table + (<usize>slot << 2));
    if (k == 0) break;
    const o = out + (<usize>(first + k - 1) << 3);
    const a = <usize>load<u32>(o);
    if (<usize>load<u32>(o, 4) - a == units && memory.compare(t + (a << 1), c0, units << 1) == 0) return -1;
    slot = (slot + 1) & mask;
  }
  return <i32>slot;
}

/**
 * Appends the specific terms of the ASCII text of `len` units at t, distinct, in order of first
 * occurrence, to the pairs at `out` (`pairs` of them so far), with `table` of `size` slots
 * cleared for finding repeats; returns the pair count.
 */
// @ts-ignore: decorator
@inline function textTerms(t: usize, len: usize, out: usize, pairs: u32, table: usize, size: u32): u32 {
  const mask = size - 1;
  memory.fill(table, 0, <usize>size << 2);
  const first = pairs;
  for (let p: usize = 0; p < len; ) {
    const q = leadEnd(t, len, p);
    if (!isEdge(at(t, len, q))) {
      p++;
      continue;
    }
    const last = candidateLast(t, len, q);
    const start = p;
    const stop = last + 1;
    p = stop;
    if (start == q && lowerOnly) continue;
    const units = stop - start;
    const c0 = t + (start << 1);
    if (!isSpecific(c0, units)) continue;
    const slot = termSlot(table, mask, t, c0, units, out, first);
    if (slot < 0) continue;
    store<u32>(table + (<usize>slot << 2), pairs - first + 1);
    store<u32>(out + (<usize>pairs << 3), <u32>start);
    store<u32>(out + (<usize>pairs << 3), <u32>stop, 4);
    pairs++;
  }
  return pairs;
}

/**
 * The specific terms of each of n texts (UTF-16LE at `data`, u32 byte offsets, n + 1): for each
 * ASCII text, its distinct terms in order of first occurrence as (start, end) unit offsets in
 * the text, u32 pairs at `out`, text after text; after text i the pairs written so far at
 * `ends`; byte i of `nonAscii` set to 1 for a text holding a unit above 0x7f (not scanned: its
 * terms need the Unicode classes of the candidate regex) and to 0 otherwise. `table` holds
 * `slots` u32 (a power of two, at least twice the terms of any text: half its units suffices)
 * for finding repeats. Returns the pair count, or a negative E_* code.
 */
export function specificTermSpans(data: usize, offsets: usize, n: i32, out: usize, ends: usize, nonAscii: usize, table: usize, slots: u32): i32 {
  if (n < 0) return E_BAD_LENGTH;
  if (slots == 0 || (slots & (slots - 1)) != 0) return E_BAD_LENGTH;
  let pairs: u32 = 0;
  for (let i = 0; i < n; i++) {
    const s = load<u32>(offsets + (<usize>i << 2));
    const e = load<u32>(offsets + (<usize>(i + 1) << 2));
    if (e < s || ((e - s) & 1) != 0) return E_BAD_OFFSETS;
    const t = data + s;
    const len = <usize>((e - s) >> 1);
    if (hasNonAscii(t, len)) {
      store<u8>(nonAscii + i, 1);
      store<u32>(ends + (<usize>i << 2), pairs);
      continue;
    }
    store<u8>(nonAscii + i, 0);
    pairs = textTerms(t, len, out, pairs, table, tableSize(len, slots));
    store<u32>(ends + (<usize>i << 2), pairs);
  }
  return <i32>pairs;
}
