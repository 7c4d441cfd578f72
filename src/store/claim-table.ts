/**
 * The first claim of each name in a claim log (claim-log.ts), as a reader of the log keeps them:
 * a writer of a shared directory must know every name any writer claimed, so the table holds as
 * many claims as the batch makes, and its memory stays flat. The latest claims, up to `at`
 * (65,536), sit in memory, an 18-byte slot each: a 64-bit fingerprint of the name, the offset
 * of its first claim's line in the log and the line's length, with a bit for "this writer's";
 * open addressing, at most three quarters full. The older ones go to sorted runs on disk (claim-runs.ts), of which
 * memory keeps 2 to 3 bytes a claim. A 1 GB batch makes 1.16 million claims: held in slots, they
 * took 38 MB a worker (and the PackIndex before them ~100 MB).
 *
 * A name is known by its fingerprint alone, not compared back with the log's bytes. Two names
 * that share the 64 bits make the later one's claims look like the earlier's: its put then
 * compares its digest with the earlier name's claim and, the digests differing, takes the next
 * name of its chain (a name more, nothing lost); only a put of bytes that also collide in the
 * later name's 128 bits could then share that name with another writer's, which takes the work
 * of a 128-bit collision itself.
 */

import { ClaimRuns, type ClaimRecord } from "./claim-runs.js";
import type { FsOps } from "./fs-ops.js";

/** A claim's line in the log: its offset and length, and whether this writer made it. */
export interface FirstClaim {
  offset: number;
  length: number;
  mine: boolean;
}

const kInitialSlots = 1024;
/** A claim line's length is kept in 15 bits (lines are ~130 bytes; a longer one is never a claim). */
export const kMaxClaimLine = 0x7fff;
const kMine = 0x8000;
/** Claims kept in memory before they go to a run on disk (2.4 MB of slots). */
const kDefaultSpillAt = 1 << 16;

/** Where a table puts its older claims (claim-runs.ts): its writer's directory. */
export interface ClaimSpill {
  fs: FsOps;
  dir: string;
  /** Claims kept in memory before the table writes them to a run. @default 65536 */
  at?: number;
}

export class ClaimTable {
  #recent = new Slots(kInitialSlots);
  readonly #runs: ClaimRuns | undefined;
  readonly #spillAt: number;
  #size = 0;

  /** Without `spill`, every claim stays in memory (tests, small tables). */
  constructor(spill?: ClaimSpill) {
    this.#runs = spill && new ClaimRuns(spill.fs, spill.dir);
    this.#spillAt = spill?.at ?? kDefaultSpillAt;
  }

  get size(): number {
    return this.#size;
  }

  /** Runs on disk. */
  get runs(): number {
    return this.#runs?.runs ?? 0;
  }

  /** The first claim kept for `name`, or undefined. */
  get(name: string): FirstClaim | undefined {
    const [hi, lo] = fingerprint(name);
    const s = this.#recent.find(hi, lo);
    if (this.#recent.line[s] !== 0) return firstClaim(this.#recent.offset[s], this.#recent.line[s]);
    const r = this.#runs?.get(hi, lo);
    return r && firstClaim(r.offset, r.line);
  }

  /** Keeps the claim of `name` on the line at `offset` (`length` bytes, 1 to kMaxClaimLine) unless one is kept: the first wins. */
  add(name: string, offset: number, length: number, mine: boolean): void {
    const [hi, lo] = fingerprint(name);
    if (this.#recent.line[this.#recent.find(hi, lo)] !== 0 || this.#runs?.get(hi, lo)) return;
    if (this.#runs && this.#recent.size >= this.#spillAt) {
      this.#runs.spill(this.#recent.size, this.#recent.sorted());
      this.#recent = new Slots(kInitialSlots);
    }
    this.#recent.add(hi, lo, offset, length | (mine ? kMine : 0));
    this.#size++;
  }
}

const firstClaim = (offset: number, line: number): FirstClaim => ({ offset, length: line & ~kMine, mine: (line & kMine) !== 0 });

/** Claims by fingerprint in memory: open addressing, at most three quarters full. */
class Slots {
  hi: Uint32Array;
  lo: Uint32Array;
  offset: Float64Array;
  /** The line's length, and kMine for this writer's; 0 in a free slot. */
  line: Uint16Array;
  size = 0;

  constructor(slots: number) {
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
    this.offset = new Float64Array(slots);
    this.line = new Uint16Array(slots);
  }

  /** The slot holding this fingerprint, or the free slot where it would go. */
  find(hi: number, lo: number): number {
    const mask = this.line.length - 1;
    let s = (lo ^ Math.imul(hi, 0x9e3779b1)) & mask;
    while (this.line[s] !== 0 && (this.hi[s] !== hi || this.lo[s] !== lo)) s = (s + 1) & mask;
    return s;
  }

  /** Adds a fingerprint not in the table. */
  add(hi: number, lo: number, offset: number, line: number): void {
    if ((this.size + 1) * 4 > this.line.length * 3) this.#grow();
    const s = this.find(hi, lo);
    this.hi[s] = hi;
    this.lo[s] = lo;
    this.offset[s] = offset;
    this.line[s] = line;
    this.size++;
  }

  /** The claims in fingerprint order, one record object handed out again for each. */
  *sorted(): Generator<ClaimRecord> {
    const keys = new BigUint64Array(this.size);
    let n = 0;
    for (let s = 0; s < this.line.length; s++) if (this.line[s] !== 0) keys[n++] = (BigInt(this.hi[s]) << 32n) | BigInt(this.lo[s]);
    keys.sort();
    const r: ClaimRecord = { hi: 0, lo: 0, offset: 0, line: 0 };
    for (const key of keys) {
      r.hi = Number(key >> 32n);
      r.lo = Number(key & 0xffffffffn);
      const s = this.find(r.hi, r.lo);
      r.offset = this.offset[s];
      r.line = this.line[s];
      yield r;
    }
  }

  #grow(): void {
    const { hi, lo, offset, line } = this;
    const slots = line.length * 2;
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
    this.offset = new Float64Array(slots);
    this.line = new Uint16Array(slots);
    for (let k = 0; k < line.length; k++) {
      if (line[k] === 0) continue;
      const s = this.find(hi[k], lo[k]);
      this.hi[s] = hi[k];
      this.lo[s] = lo[k];
      this.offset[s] = offset[k];
      this.line[s] = line[k];
    }
  }
}

/** Two independent 32-bit FNV-1a hashes of `name`'s UTF-16 code units (names are ASCII), the second with another basis. */
function fingerprint(name: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return [a >>> 0, b >>> 0];
}
