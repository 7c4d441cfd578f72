/**
 * Where each entry of a pack store sits, kept in typed arrays: a batch worker stores hundreds of
 * thousands of outputs, and a Map of name strings to entry objects held ~290 bytes per entry,
 * growing the worker's heap with its input (see the batch figures in docs/batch.md). Here an entry is
 * its content hash (two u32), the id of the rest of its name (`kind`, collision number and
 * `ext`, interned: a batch has a handful), its pack's id, offset and length, ~40 bytes with the
 * hash table's slots.
 *
 * Names are the store's own (`kind_hash[-n].ext`, checked before they reach here); the first
 * `set` of a name wins, as the first index line naming it does on disk.
 */
import { kNameAroundHash } from "./names.js";

export interface PackEntry {
  pack: string;
  offset: number;
  length: number;
}

const kEmpty = -1;
const kInitialCapacity = 1024;

export class PackIndex {
  /** Packs and name shapes (the name around its hash, `kind_/-n.ext`: `/` marks where the hash goes), each interned once. */
  readonly #packs: string[] = [];
  readonly #packIds = new Map<string, number>();
  readonly #shapes: string[] = [];
  readonly #shapeIds = new Map<string, number>();
  #size = 0;
  #hashLo = new Uint32Array(kInitialCapacity);
  #hashHi = new Uint32Array(kInitialCapacity);
  #shape = new Uint32Array(kInitialCapacity);
  #pack = new Uint32Array(kInitialCapacity);
  #offset = new Float64Array(kInitialCapacity);
  #length = new Float64Array(kInitialCapacity);
  /** Open addressing, linear probing: entry index per slot, kEmpty where free; at most half full. */
  #slots = new Int32Array(kInitialCapacity * 2).fill(kEmpty);

  get size(): number {
    return this.#size;
  }

  has(name: string): boolean {
    return this.#find(name) >= 0;
  }

  get(name: string): PackEntry | undefined {
    const i = this.#find(name);
    return i < 0 ? undefined : { pack: this.#packs[this.#pack[i]], offset: this.#offset[i], length: this.#length[i] };
  }

  /** Every name indexed, in the order first set. */
  *names(): Generator<string> {
    for (let i = 0; i < this.#size; i++) {
      const hash = this.#hashHi[i].toString(16).padStart(8, "0") + this.#hashLo[i].toString(16).padStart(8, "0");
      yield this.#shapes[this.#shape[i]].replace("/", hash);
    }
  }

  /** Adds `name` at `entry` unless it is indexed already (the first wins); false for a name that is not a store name. */
  set(name: string, entry: PackEntry): boolean {
    const key = parse(name);
    if (key === undefined) return false;
    const shape = intern(this.#shapes, this.#shapeIds, key.shape);
    if (this.#slotOf(key.lo, key.hi, shape) >= 0) return true;
    if ((this.#size + 1) * 2 > this.#slots.length) this.#grow();
    const i = this.#size++;
    this.#hashLo[i] = key.lo;
    this.#hashHi[i] = key.hi;
    this.#shape[i] = shape;
    this.#pack[i] = intern(this.#packs, this.#packIds, entry.pack);
    this.#offset[i] = entry.offset;
    this.#length[i] = entry.length;
    this.#place(i);
    return true;
  }

  /** The entry index of `name`, or -1. */
  #find(name: string): number {
    const key = parse(name);
    const shape = key === undefined ? undefined : this.#shapeIds.get(key.shape);
    if (key === undefined || shape === undefined) return -1;
    const slot = this.#slotOf(key.lo, key.hi, shape);
    return slot < 0 ? -1 : this.#slots[slot];
  }

  /** The slot holding the entry with this hash and shape, or -1. */
  #slotOf(lo: number, hi: number, shape: number): number {
    const mask = this.#slots.length - 1;
    for (let s = mix(lo, hi, shape) & mask; ; s = (s + 1) & mask) {
      const i = this.#slots[s];
      if (i === kEmpty) return -1;
      if (this.#hashLo[i] === lo && this.#hashHi[i] === hi && this.#shape[i] === shape) return s;
    }
  }

  #place(i: number): void {
    const mask = this.#slots.length - 1;
    let s = mix(this.#hashLo[i], this.#hashHi[i], this.#shape[i]) & mask;
    while (this.#slots[s] !== kEmpty) s = (s + 1) & mask;
    this.#slots[s] = i;
  }

  #grow(): void {
    const capacity = this.#hashLo.length * 2;
    const widen = <T extends Uint32Array | Float64Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(capacity);
      b.set(a);
      return b;
    };
    this.#hashLo = widen(this.#hashLo);
    this.#hashHi = widen(this.#hashHi);
    this.#shape = widen(this.#shape);
    this.#pack = widen(this.#pack);
    this.#offset = widen(this.#offset);
    this.#length = widen(this.#length);
    this.#slots = new Int32Array(capacity * 2).fill(kEmpty);
    for (let i = 0; i < this.#size; i++) this.#place(i);
  }
}

function parse(name: string): { lo: number; hi: number; shape: string } | undefined {
  const m = kNameAroundHash.exec(name);
  if (!m) return undefined;
  return { hi: Number.parseInt(m[2].slice(0, 8), 16), lo: Number.parseInt(m[2].slice(8), 16), shape: `${m[1]}/${m[3]}` };
}

function intern(list: string[], ids: Map<string, number>, value: string): number {
  let id = ids.get(value);
  if (id === undefined) {
    id = list.length;
    list.push(value);
    ids.set(value, id);
  }
  return id;
}

/** The content hash is already uniform: its low word, stirred by the shape, picks the slot. */
const mix = (lo: number, hi: number, shape: number): number => (lo ^ Math.imul(hi, 0x9e3779b1) ^ Math.imul(shape, 0x85ebca6b)) >>> 0;
