/**
 * The first claim of each name in a claim log (claim-log.ts), as a reader of the log keeps them:
 * a writer of a shared directory must know every name any writer claimed, so this table grows
 * with the batch, and it is kept small. A slot is 18 bytes: a 64-bit fingerprint of the name, the
 * offset of its first claim's line in the log and the line's length, with a bit for "this
 * writer's"; open addressing, at most three quarters full. The PackIndex it replaces took ~48
 * bytes an entry plus its slots, ~100 MB a worker at 1.16 million claims (a 1 GB batch).
 *
 * A name is known by its fingerprint alone, not compared back with the log's bytes. Two names
 * that share the 64 bits make the later one's claims look like the earlier's: its put then
 * compares its digest with the earlier name's claim and, the digests differing, takes the next
 * name of its chain (a name more, nothing lost); only a put of bytes that also collide in the
 * later name's 128 bits could then share that name with another writer's, which takes the work
 * of a 128-bit collision itself.
 */

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

export class ClaimTable {
  #hi = new Uint32Array(kInitialSlots);
  #lo = new Uint32Array(kInitialSlots);
  #offset = new Float64Array(kInitialSlots);
  /** The line's length, and kMine for this writer's; 0 in a free slot. */
  #line = new Uint16Array(kInitialSlots);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** The first claim kept for `name`, or undefined. */
  get(name: string): FirstClaim | undefined {
    const [hi, lo] = fingerprint(name);
    const s = this.#find(hi, lo);
    if (this.#line[s] === 0) return undefined;
    return { offset: this.#offset[s], length: this.#line[s] & ~kMine, mine: (this.#line[s] & kMine) !== 0 };
  }

  /** Keeps the claim of `name` on the line at `offset` (`length` bytes, 1 to kMaxClaimLine) unless one is kept: the first wins. */
  add(name: string, offset: number, length: number, mine: boolean): void {
    const [hi, lo] = fingerprint(name);
    let s = this.#find(hi, lo);
    if (this.#line[s] !== 0) return;
    if ((this.#size + 1) * 4 > this.#line.length * 3) {
      this.#grow();
      s = this.#find(hi, lo);
    }
    this.#hi[s] = hi;
    this.#lo[s] = lo;
    this.#offset[s] = offset;
    this.#line[s] = length | (mine ? kMine : 0);
    this.#size++;
  }

  /** The slot holding this fingerprint, or the free slot where it would go. */
  #find(hi: number, lo: number): number {
    const mask = this.#line.length - 1;
    let s = (lo ^ Math.imul(hi, 0x9e3779b1)) & mask;
    while (this.#line[s] !== 0 && (this.#hi[s] !== hi || this.#lo[s] !== lo)) s = (s + 1) & mask;
    return s;
  }

  #grow(): void {
    const [hi, lo, offset, line] = [this.#hi, this.#lo, this.#offset, this.#line];
    const slots = line.length * 2;
    this.#hi = new Uint32Array(slots);
    this.#lo = new Uint32Array(slots);
    this.#offset = new Float64Array(slots);
    this.#line = new Uint16Array(slots);
    for (let k = 0; k < line.length; k++) {
      if (line[k] === 0) continue;
      const s = this.#find(hi[k], lo[k]);
      this.#hi[s] = hi[k];
      this.#lo[s] = lo[k];
      this.#offset[s] = offset[k];
      this.#line[s] = line[k];
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
