import { kDefaultBatchBytes } from "../../constants.js";
import { coreFor, type Backend } from "../../core/backend.js";
import { align16, type CoreInstance } from "../../core/core-instance.js";
import { CtxfoldError, notStringError } from "../../errors.js";
import { isWordUnit } from "../../model/terms.js";
import { kTermWordEnd, kTermWordStart, termLinesReference, type TermLineMatches } from "./term-lines.reference.js";

export type { TermLineMatches };

const kEncoder = new TextEncoder();

/**
 * Terms made ready for termLines once and used for many texts: their UTF-8 bytes and boundary
 * flags (a term that starts or ends with a word character needs a non-word neighbour there, as
 * containsTerm in src/model/terms.ts decides). Terms are at least 2 UTF-8 bytes, distinct and
 * without a newline: specific terms always are. Every term's bytes are a view of one buffer,
 * encoded at once: a set of thousands of terms (the ledger makes one per epoch) is then one
 * allocation outside the JS heap, not thousands of small ones.
 */
export class TermSet {
  readonly bytes: Uint8Array[];
  readonly flags: Uint8Array;

  constructor(readonly terms: readonly string[]) {
    const seen = new Set<string>();
    this.flags = new Uint8Array(terms.length);
    terms.forEach((t, k) => {
      if (typeof t !== "string") throw notStringError(`terms[${k}]`, t);
      // Under 2 UTF-8 bytes: empty, or one ASCII character (any other is 2 or 3 bytes, a lone surrogate's replacement 3).
      if (t.length === 0 || (t.length === 1 && t.charCodeAt(0) < 0x80) || t.includes("\n") || seen.has(t)) {
        throw new CtxfoldError("E_BAD_INPUT", `expected a term of at least 2 UTF-8 bytes, distinct and without a newline, got ${JSON.stringify(t)}`, {
          path: `terms[${k}]`,
        });
      }
      seen.add(t);
      this.flags[k] = (isWordUnit(t.charCodeAt(0)) ? kTermWordStart : 0) | (isWordUnit(t.charCodeAt(t.length - 1)) ? kTermWordEnd : 0);
    });
    // Joined by the newline no term holds, encoded once, cut back at the newlines.
    const all = kEncoder.encode(terms.join("\n"));
    this.bytes = new Array<Uint8Array>(terms.length);
    for (let k = 0, at = 0; k < terms.length; k++) {
      const end = k + 1 < terms.length ? all.indexOf(0x0a, at) : all.length;
      this.bytes[k] = all.subarray(at, end);
      at = end + 1;
    }
  }
}

/**
 * The lines of each text (split on `\n`, counted from 0 per text) that contain a term as a
 * whole (containsTerm's rule), with how many distinct terms each holds, in line order, and
 * which terms occur anywhere (`found`: containsTerm of some text, per term). One
 * pass over each text whatever the number of terms: the WASM kernel (assembly/term-lines.ts)
 * over UTF-8 written straight into linear memory, texts batched per call; `backend: "ts"` runs
 * its TypeScript twin.
 */
export function termLines(texts: readonly string[], terms: TermSet | readonly string[], options: { backend?: Backend | "auto" } = {}): TermLineMatches {
  const set = terms instanceof TermSet ? terms : new TermSet(terms);
  texts.forEach((t, i) => {
    if (typeof t !== "string") throw notStringError(`texts[${i}]`, t);
  });
  const core = coreFor(options.backend);
  if (core) return termLinesWasm(core, texts, set);
  const offsets = new Uint32Array(texts.length + 1);
  const parts = texts.map((t, i) => {
    const b = kEncoder.encode(t);
    offsets[i + 1] = offsets[i] + b.length;
    return b;
  });
  const data = new Uint8Array(offsets[texts.length]);
  parts.forEach((b, i) => data.set(b, offsets[i]));
  return termLinesReference(data, offsets, set.bytes, set.flags);
}

/** termLines on the core: terms and tables laid out once, then texts in batches of about kDefaultBatchBytes. */
function termLinesWasm(core: CoreInstance, texts: readonly string[], set: TermSet): TermLineMatches {
  const m = set.bytes.length;
  const termBytes = set.bytes.reduce((n, b) => n + b.length, 0);
  const scratchBytes = core.run("termLines", (e) => e.termLinesScratch(m));
  const termOffsets = align16(termBytes);
  const flags = align16(termOffsets + (m + 1) * 4);
  const found = align16(flags + m);
  const scratch = align16(found + m);
  const batch0 = align16(scratch + scratchBytes);
  let a = core.arena(batch0);
  let at = 0;
  a.u32[(a.base + termOffsets) >>> 2] = 0;
  set.bytes.forEach((b, k) => {
    a.u8.set(b, a.base + at);
    a.u32[((a.base + termOffsets) >>> 2) + k + 1] = at += b.length;
  });
  a.u8.set(set.flags, a.base + flags);
  const ends = new Uint32Array(texts.length);
  const anyFound = new Uint8Array(m);
  const chunks: Uint32Array[] = [];
  let pairsSoFar = 0;
  for (let first = 0; first < texts.length; ) {
    let units = 0;
    let end = first;
    while (end < texts.length && (end === first || (units + texts[end].length) * 3 <= kDefaultBatchBytes)) units += texts[end++].length;
    const count = end - first;
    const offsets = batch0;
    const data = align16(offsets + (count + 1) * 4);
    a = core.arena(data + units * 3);
    let o = (a.base + offsets) >>> 2;
    let pos = 0;
    a.u32[o++] = 0;
    for (let i = first; i < end; i++) {
      if (texts[i].length > 0) pos += kEncoder.encodeInto(texts[i], a.u8.subarray(a.base + data + pos)).written;
      a.u32[o++] = pos;
    }
    const endsAt = align16(data + pos);
    const out = align16(endsAt + count * 4);
    a = core.arena(out + 4 * pos + 8 * count);
    const b = a.base;
    const pairs = core.run("termLines", (e) =>
      e.termLines(b + data, b + offsets, count, b, b + termOffsets, b + flags, m, b + scratch, b + out, b + endsAt, b + found),
    );
    a = core.arena(0);
    for (let k = 0; k < m; k++) anyFound[k] |= a.u8[b + found + k];
    chunks.push(a.u32.slice((b + out) >>> 2, ((b + out) >>> 2) + pairs * 2));
    for (let i = 0; i < count; i++) ends[first + i] = pairsSoFar + a.u32[((b + endsAt) >>> 2) + i];
    pairsSoFar += pairs;
    first = end;
  }
  core.releaseArena();
  const pairs = new Uint32Array(pairsSoFar * 2);
  let p = 0;
  for (const c of chunks) {
    pairs.set(c, p);
    p += c.length;
  }
  return { pairs, ends, found: anyFound };
}
