import { isWordUnit } from "../../model/terms.js";

/** Bit 0 of a term's flag: a word character right before a match rejects it. */
export const kTermWordStart = 1;
/** Bit 1 of a term's flag: a word character right after a match rejects it. */
export const kTermWordEnd = 2;

/**
 * The pairs of termLines: `pairs[2k]` a line (from 0 per text), `pairs[2k + 1]` its distinct
 * terms; text i's pairs end at `ends[i]`. `found[k]` is 1 when term k occurs in some text.
 */
export interface TermLineMatches {
  pairs: Uint32Array;
  ends: Uint32Array;
  found: Uint8Array;
}

/** Whether a code point is a word character (outside the BMP never: a surrogate in UTF-16). */
const isWordCodePoint = (cp: number) => cp < 0x10000 && isWordUnit(cp);

/** The code point whose UTF-8 sequence starts at `p` (4-byte sequences as 0x10000). */
function codePointAt(b: Uint8Array, p: number, end: number): number {
  const c = b[p];
  if (c < 0x80) return c;
  if (c >= 0xf0) return 0x10000;
  if (c >= 0xe0) return p + 2 >= end ? 0xfffd : ((c & 0x0f) << 12) | ((b[p + 1] & 0x3f) << 6) | (b[p + 2] & 0x3f);
  return p + 1 >= end ? 0xfffd : ((c & 0x1f) << 6) | (b[p + 1] & 0x3f);
}

function codePointBefore(b: Uint8Array, p: number, start: number): number {
  let q = p - 1;
  while (q > start && p - q < 4 && (b[q] & 0xc0) === 0x80) q--;
  return codePointAt(b, q, p);
}

/**
 * Twin of assembly/term-lines.ts: the lines of each UTF-8 text (`data[offsets[i]..offsets[i+1])`)
 * containing a term as a whole, with how many distinct terms each holds. Terms are UTF-8 byte
 * arrays of at least 2 bytes, distinct, without a newline, each with its flag byte
 * (kTermWordStart, kTermWordEnd). Throws a RangeError where the kernel returns an E_* code.
 */
export function termLinesReference(data: Uint8Array, offsets: Uint32Array, terms: readonly Uint8Array[], flags: Uint8Array): TermLineMatches {
  const byKey = new Map<number, number[]>();
  terms.forEach((t, k) => {
    if (t.length < 2) throw new RangeError(`term ${k}: shorter than 2 UTF-8 bytes`);
    const key = t[0] | (t[1] << 8);
    const list = byKey.get(key);
    if (list) list.push(k);
    else byKey.set(key, [k]);
  });
  const n = offsets.length - 1;
  const pairs: number[] = [];
  const found = new Uint8Array(terms.length);
  const ends = new Uint32Array(Math.max(0, n));
  for (let i = 0; i < n; i++) {
    const start = offsets[i];
    const end = offsets[i + 1];
    if (end < start) throw new RangeError(`offsets not monotonic at ${i}`);
    let line = 0;
    let seen = new Set<number>();
    for (let p = start; p < end; p++) {
      if (data[p] === 0x0a) {
        if (seen.size > 0) pairs.push(line, seen.size);
        seen = new Set();
        line++;
        continue;
      }
      if (p + 1 >= end) break;
      const cands = byKey.get(data[p] | (data[p + 1] << 8));
      if (cands === undefined) continue;
      for (const k of cands) {
        const t = terms[k];
        if (seen.has(k) || p + t.length > end) continue;
        let eq = true;
        for (let j = 2; j < t.length && eq; j++) eq = data[p + j] === t[j];
        if (!eq) continue;
        if ((flags[k] & kTermWordStart) !== 0 && p > start && isWordCodePoint(codePointBefore(data, p, start))) continue;
        if ((flags[k] & kTermWordEnd) !== 0 && p + t.length < end && isWordCodePoint(codePointAt(data, p + t.length, end))) continue;
        seen.add(k);
        found[k] = 1;
      }
    }
    if (seen.size > 0) pairs.push(line, seen.size);
    ends[i] = pairs.length / 2;
  }
  return { pairs: Uint32Array.from(pairs), ends, found };
}
