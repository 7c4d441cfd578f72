import { estimateUnits } from "./estimate-tokens";
import { E_BAD_LENGTH } from "./errors";

// The structural scan of one JSON text in UTF-8: a tape of its tokens and the token estimate of
// every string value, without building a value. Strict: it accepts exactly what a strict UTF-8
// decode followed by JSON.parse accepts (within its depth and token limits), and says why not
// otherwise; it never guesses.

/** Token kinds (the low byte of a tape entry's first word). */
export const TOKEN_OBJECT: u32 = 1;
export const TOKEN_ARRAY: u32 = 2;
export const TOKEN_KEY: u32 = 3;
export const TOKEN_STRING: u32 = 4;
export const TOKEN_NUMBER: u32 = 5;
export const TOKEN_TRUE: u32 = 6;
export const TOKEN_FALSE: u32 = 7;
export const TOKEN_NULL: u32 = 8;
/** A string or key with an escape in it: its bytes are not its text. */
export const FLAG_ESCAPED: u32 = 1 << 8;

/** Why a text was not scanned (written to the status word; the scan then returns 0). */
export const SCAN_NOT_JSON: i32 = 1;
export const SCAN_NOT_UTF8: i32 = 2;
export const SCAN_TOO_DEEP: i32 = 3;
export const SCAN_TOO_MANY_TOKENS: i32 = 4;

/** Estimates per string value (the estimator's ENCODINGS). */
const ENCODINGS: usize = 2;

// Scan state, module-level so the helpers stay small and inlinable.
let base: usize = 0;
let at: usize = 0;
let end: usize = 0;
let tokens: i32 = 0;
let maxTokens: i32 = 0;
let tape: usize = 0;
let estimates: usize = 0;
let units: usize = 0;
let weights: usize = 0;
let status: i32 = 0;
/** Whether the string scanString last read held an escape. */
let escaped = false;

/** Appends a tape entry (kind and flags, start, end, next); false when the tape is full. */
// @ts-ignore: decorator
@inline function push(word: u32, start: usize, stop: usize): bool {
  if (tokens >= maxTokens) {
    status = SCAN_TOO_MANY_TOKENS;
    return false;
  }
  const e = tape + (<usize>tokens << 4);
  store<u32>(e, word);
  store<u32>(e, <u32>(start - base), 4);
  store<u32>(e, stop == 0 ? 0 : <u32>(stop - base), 8);
  store<u32>(e, <u32>(tokens + 1), 12);
  tokens++;
  return true;
}

// @ts-ignore: decorator
@inline function fail(why: i32): bool {
  status = why;
  return false;
}

// @ts-ignore: decorator
@inline function failAt(p: usize, why: i32): i32 {
  at = p;
  status = why;
  return -1;
}

function skipSpace(): void {
  while (at < end) {
    const c = load<u8>(at);
    if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) return;
    at++;
  }
}

// @ts-ignore: decorator
@inline function hexValue(c: u32): i32 {
  if (c >= 0x30 && c <= 0x39) return <i32>(c - 0x30);
  if (c >= 0x61 && c <= 0x66) return <i32>(c - 0x57);
  if (c >= 0x41 && c <= 0x46) return <i32>(c - 0x37);
  return -1;
}

/** The bytes of v that end a plain run (a quote, a backslash, a control byte or not ASCII), each lane all ones. */
// @ts-ignore: decorator
@inline function specialBytes(v: v128): v128 {
  return v128.or(v128.or(i8x16.lt_u(v, i8x16.splat(0x20)), i8x16.lt_s(v, i8x16.splat(0))), v128.or(i8x16.eq(v, i8x16.splat(0x22)), i8x16.eq(v, i8x16.splat(0x5c))));
}

/** Stores the 16 bytes of v at `to` as UTF-16 units (zero-extended). */
// @ts-ignore: decorator
@inline function storeWidened(to: usize, v: v128): void {
  v128.store(to, i16x8.extend_low_i8x16_u(v));
  v128.store(to, i16x8.extend_high_i8x16_u(v), 16);
}

/** The unit a one-letter escape (`\"`, `\n`, …) stands for, by the letter after its backslash; -1 for any other letter. */
// @ts-ignore: decorator
@inline function simpleEscape(c: u32): i32 {
  if (c == 0x22 || c == 0x5c || c == 0x2f) return <i32>c;
  if (c == 0x62) return 0x08;
  if (c == 0x66) return 0x0c;
  if (c == 0x6e) return 0x0a;
  if (c == 0x72) return 0x0d;
  if (c == 0x74) return 0x09;
  return -1;
}

/** The unit a `\uXXXX` escape at p (its backslash; `stop` the text's end) stands for; -1 when it is not one. */
// @ts-ignore: decorator
@inline function unicodeEscape(p: usize, stop: usize): i32 {
  if (load<u8>(p + 1) != 0x75 || p + 5 >= stop) return -1;
  const h0 = hexValue(load<u8>(p + 2));
  const h1 = hexValue(load<u8>(p + 3));
  const h2 = hexValue(load<u8>(p + 4));
  const h3 = hexValue(load<u8>(p + 5));
  if ((h0 | h1 | h2 | h3) < 0) return -1;
  return (h0 << 12) | (h1 << 8) | (h2 << 4) | h3;
}

/**
 * Writes code point `cp` as UTF-16 at unit n of `out` when `decode` (a surrogate pair above
 * U+FFFF); returns the unit after it. One exit, so that inlined it compiles as the code it
 * replaced did (with a return per branch the scan of non-ASCII text was ~2% slower).
 */
// @ts-ignore: decorator
@inline function putCodePoint(out: usize, n: usize, cp: u32, decode: bool): usize {
  let next: usize;
  if (cp >= 0x10000) {
    if (decode) {
      const v = cp - 0x10000;
      store<u16>(out + (n << 1), <u16>(0xd800 | (v >> 10)));
      store<u16>(out + ((n + 1) << 1), <u16>(0xdc00 | (v & 0x3ff)));
    }
    next = n + 2;
  } else {
    if (decode) store<u16>(out + (n << 1), <u16>cp);
    next = n + 1;
  }
  return next;
}

/**
 * Scans a string from `at` (just past its opening quote) to past its closing quote, writing its
 * UTF-16 units at `units` when `decode`; returns the units written, or -1 (status set).
 * UTF-8 is checked as the Unicode table of well-formed sequences has it (no overlongs, no
 * surrogates, nothing above U+10FFFF), as a strict decoder does. Runs of plain ASCII (no quote,
 * backslash or control byte) go 16 bytes at a time; positions stay in locals. The multi-byte
 * sequence stays inline, its failures returning from here: decoded by a helper that returned -1
 * for the loop to test, it made the scan of non-ASCII text ~15% slower.
 */
function scanString(decode: bool): i32 {
  let p = at;
  const stop = end;
  const out = units;
  let n: usize = 0;
  escaped = false;
  for (;;) {
    // A run of plain bytes, 16 at a time.
    while (p + 16 <= stop) {
      const v = v128.load(p);
      const special = specialBytes(v);
      if (decode) storeWidened(out + (n << 1), v);
      const mask = i8x16.bitmask(special);
      if (mask != 0) {
        const plain = <usize>ctz(mask);
        p += plain;
        n += plain;
        break;
      }
      p += 16;
      n += 16;
    }
    if (p >= stop) break;
    const b = <u32>load<u8>(p);
    if (b == 0x22) {
      at = p + 1;
      return <i32>n;
    }
    if (b < 0x80) {
      if (b == 0x5c) {
        escaped = true;
        if (p + 1 >= stop) return failAt(p, SCAN_NOT_JSON);
        let unit = simpleEscape(<u32>load<u8>(p + 1));
        if (unit < 0) {
          unit = unicodeEscape(p, stop);
          if (unit < 0) return failAt(p, SCAN_NOT_JSON);
          p += 4;
        }
        p += 2;
        if (decode) store<u16>(out + (n << 1), <u16>unit);
        n++;
        continue;
      }
      if (b < 0x20) return failAt(p, SCAN_NOT_JSON);
      if (decode) store<u16>(out + (n << 1), <u16>b);
      n++;
      p++;
      continue;
    }
    // A multi-byte sequence: how many continuation bytes its lead byte asks for, and the range of the first.
    let more: usize;
    let lo: u32 = 0x80;
    let hi: u32 = 0xbf;
    let cp: u32;
    if (b >= 0xc2 && b <= 0xdf) {
      more = 1;
      cp = b & 0x1f;
    } else if (b >= 0xe0 && b <= 0xef) {
      more = 2;
      cp = b & 0x0f;
      if (b == 0xe0) lo = 0xa0;
      else if (b == 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      more = 3;
      cp = b & 0x07;
      if (b == 0xf0) lo = 0x90;
      else if (b == 0xf4) hi = 0x8f;
    } else return failAt(p, SCAN_NOT_UTF8);
    if (p + more >= stop) return failAt(p, SCAN_NOT_UTF8);
    for (let k: usize = 1; k <= more; k++) {
      const c = <u32>load<u8>(p + k);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xbf)) return failAt(p, SCAN_NOT_UTF8);
      cp = (cp << 6) | (c & 0x3f);
    }
    p += more + 1;
    n = putCodePoint(out, n, cp, decode);
  }
  return failAt(p, SCAN_NOT_JSON);
}

/** A string token (a key when `key`): its content's byte range, flags, and for a value its estimates. */
function stringToken(key: bool): bool {
  const open = at;
  at++;
  const n = scanString(!key);
  if (n < 0) return false;
  const close = at - 1;
  const word = (key ? TOKEN_KEY : TOKEN_STRING) | (escaped ? FLAG_ESCAPED : 0);
  const index = tokens;
  if (!push(word, open + 1, close)) return false;
  if (!key) estimateUnits(units, n, weights, estimates + <usize>index * ENCODINGS * 8);
  return true;
}

function numberToken(): bool {
  const start = at;
  if (at < end && load<u8>(at) == 0x2d) at++;
  if (at >= end) return fail(SCAN_NOT_JSON);
  let c = load<u8>(at);
  if (c == 0x30) at++;
  else if (c >= 0x31 && c <= 0x39) {
    while (at < end && load<u8>(at) >= 0x30 && load<u8>(at) <= 0x39) at++;
  } else return fail(SCAN_NOT_JSON);
  if (at < end && load<u8>(at) == 0x2e) {
    at++;
    const digits = at;
    while (at < end && load<u8>(at) >= 0x30 && load<u8>(at) <= 0x39) at++;
    if (at == digits) return fail(SCAN_NOT_JSON);
  }
  if (at < end && (load<u8>(at) | 0x20) == 0x65) {
    at++;
    if (at < end && (load<u8>(at) == 0x2b || load<u8>(at) == 0x2d)) at++;
    const digits = at;
    while (at < end && load<u8>(at) >= 0x30 && load<u8>(at) <= 0x39) at++;
    if (at == digits) return fail(SCAN_NOT_JSON);
  }
  return push(TOKEN_NUMBER, start, at);
}

function literal(word: u32, text: u64, length: usize): bool {
  if (at + length > end) return fail(SCAN_NOT_JSON);
  // Compare up to 5 bytes little-endian.
  let got: u64 = 0;
  for (let k: usize = 0; k < length; k++) got |= <u64>load<u8>(at + k) << (<u64>k << 3);
  if (got != text) return fail(SCAN_NOT_JSON);
  const start = at;
  at += length;
  return push(word, start, at);
}

/**
 * The value at `at`, containers iteratively: `stack` holds the tape index of each open
 * container (its entry's `next` is filled when it closes), at most `maxDepth` deep.
 */
function value(stack: usize, maxDepth: i32): bool {
  let depth: i32 = 0;
  for (;;) {
    skipSpace();
    if (at >= end) return fail(SCAN_NOT_JSON);
    const c = load<u8>(at);
    let opened = false;
    if (c == 0x7b || c == 0x5b) {
      if (depth >= maxDepth) return fail(SCAN_TOO_DEEP);
      store<i32>(stack + (<usize>depth << 2), tokens);
      if (!push(c == 0x7b ? TOKEN_OBJECT : TOKEN_ARRAY, at, 0)) return false;
      depth++;
      at++;
      skipSpace();
      if (at >= end) return fail(SCAN_NOT_JSON);
      const close = load<u8>(at);
      if (close == (c == 0x7b ? 0x7d : 0x5d)) {
        // Empty: closed below, as after a last member.
      } else {
        if (c == 0x7b) {
          if (close != 0x22 || !stringToken(true)) return status != 0 ? false : fail(SCAN_NOT_JSON);
          skipSpace();
          if (at >= end || load<u8>(at) != 0x3a) return fail(SCAN_NOT_JSON);
          at++;
        }
        continue; // the first member's value
      }
      opened = true;
    } else if (c == 0x22) {
      if (!stringToken(false)) return false;
    } else if (c == 0x74) {
      if (!literal(TOKEN_TRUE, 0x65757274, 4)) return false;
    } else if (c == 0x66) {
      if (!literal(TOKEN_FALSE, 0x65736c6166, 5)) return false;
    } else if (c == 0x6e) {
      if (!literal(TOKEN_NULL, 0x6c6c756e, 4)) return false;
    } else if (c == 0x2d || (c >= 0x30 && c <= 0x39)) {
      if (!numberToken()) return false;
    } else return fail(SCAN_NOT_JSON);
    // After a value (or an empty container's open, `opened`): close containers or go to the next member.
    for (;;) {
      if (depth == 0) return true;
      const open = load<i32>(stack + (<usize>(depth - 1) << 2));
      const entry = tape + (<usize>open << 4);
      const isObject = (load<u32>(entry) & 0xff) == TOKEN_OBJECT;
      if (!opened) skipSpace();
      opened = false;
      if (at >= end) return fail(SCAN_NOT_JSON);
      const d = load<u8>(at);
      if (d == (isObject ? 0x7d : 0x5d)) {
        at++;
        store<u32>(entry, <u32>(at - base), 8);
        store<u32>(entry, <u32>tokens, 12);
        depth--;
        continue;
      }
      if (d != 0x2c) return fail(SCAN_NOT_JSON);
      at++;
      if (isObject) {
        skipSpace();
        if (at >= end || load<u8>(at) != 0x22) return fail(SCAN_NOT_JSON);
        if (!stringToken(true)) return false;
        skipSpace();
        if (at >= end || load<u8>(at) != 0x3a) return fail(SCAN_NOT_JSON);
        at++;
      }
      break;
    }
  }
  return false; // unreachable: the loop returns
}

/**
 * Scans the JSON text of `len` UTF-8 bytes at `data`. Writes up to `max` tape entries of four
 * u32 at `outTape` (kind | flags, start, end, next): a container's range covers its brackets
 * and `next` is the index of the first entry after its last member; a string's or key's range
 * is its content between the quotes; a scalar's, its characters. For each string value (not
 * key) entry i, ENCODINGS f64 estimates at `outEstimates + i * 16` (the estimator over its
 * decoded UTF-16 text, with the weight table at `weightTable`, as estimateBatch gives for that
 * text). `scratch` holds 2 * len + 128 bytes (the decoded text of one string), `stack` 4 *
 * maxDepth. Returns the entry count, or 0 with the reason (SCAN_*) at `outStatus` when the
 * text is not a JSON text under strict UTF-8 or is past the limits; a negative E_* code for bad
 * arguments.
 */
export function scanJson(
  data: usize, len: i32, weightTable: usize, outTape: usize, max: i32, outEstimates: usize,
  scratch: usize, stack: usize, maxDepth: i32, outStatus: usize,
): i32 {
  if (len < 0 || max < 0 || maxDepth < 0) return E_BAD_LENGTH;
  base = data;
  at = data;
  end = data + <usize>len;
  tokens = 0;
  maxTokens = max;
  tape = outTape;
  estimates = outEstimates;
  units = (scratch + 15) & ~15;
  weights = weightTable;
  status = 0;
  let ok = value(stack, maxDepth);
  if (ok) {
    skipSpace();
    if (at != end) ok = fail(SCAN_NOT_JSON);
  }
  if (!ok && status == 0) status = SCAN_NOT_JSON;
  store<i32>(outStatus, ok ? 0 : status);
  return ok ? tokens : 0;
}
