/**
 * Where each entry of a pack store sits, kept in typed arrays: a batch worker stores hundreds of
 * thousands of outputs, and a Map of name strings to entry objects held ~290 bytes per entry,
 * growing the worker's heap with its input (see the batch figures in docs/batch.md). Here an entry is
 * its content hash (four u32: 128 bits, or 64 in the two low words for a name of before), the id
 * of the rest of its name (`kind`, the hash's width, collision number and `ext`, interned: a
 * batch has a handful), its pack's id, offset and length, ~48 bytes with the hash table's slots.
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
  /**
   * Packs and name shapes (the name around its hash and the hash's width, `kind_/32/-n.ext`:
   * the slashes mark where the hash goes), each interned once.
   */
  readonly #packs: string[] = [];
  readonly #packIds = new Map<string, number>();
  readonly #shapes: string[] = [];
  readonly #shapeIds = new Map<string, number>();
  #size = 0;
  /** The hash's 32-bit words, most significant first (w0, w1 zero for a 16-digit hash). */
  #w0 = new Uint32Array(kInitialCapacity);
  #w1 = new Uint32Array(kInitialCapacity);
  #w2 = new Uint32Array(kInitialCapacity);
  #w3 = new Uint32Array(kInitialCapacity);
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
      const [head, digits, tail] = this.#shapes[this.#shape[i]].split("/");
      const words = [this.#w0[i], this.#w1[i], this.#w2[i], this.#w3[i]].map((w) => w.toString(16).padStart(8, "0")).join("");
      yield head + words.slice(words.length - Number(digits)) + tail;
    }
  }

  /** Adds `name` at `entry` unless it is indexed already (the first wins); false for a name that is not a store name. */
  set(name: string, entry: PackEntry): boolean {
    const key = parse(name);
    if (key === undefined) return false;
    const shape = intern(this.#shapes, this.#shapeIds, key.shape);
    if (this.#slotOf(key.words, shape) >= 0) return true;
    if ((this.#size + 1) * 2 > this.#slots.length) this.#grow();
    const i = this.#size++;
    [this.#w0[i], this.#w1[i], this.#w2[i], this.#w3[i]] = key.words;
    this.#shape[i] = shape;
    this.#pack[i] = intern(this.#packs, this.#packIds, entry.pack);
    this.#offset[i] = entry.offset;
    this.#length[i] = entry.length;
    this.#place(i);
    return true;
  }

  /** The entry index of `name`, or -1. */
  #find(name: string): number {
    if (this.#size === 0) return -1; // a fresh directory's index: nothing to parse the name for
    const key = parse(name);
    const shape = key === undefined ? undefined : this.#shapeIds.get(key.shape);
    if (key === undefined || shape === undefined) return -1;
    const slot = this.#slotOf(key.words, shape);
    return slot < 0 ? -1 : this.#slots[slot];
  }

  /** The slot holding the entry with this hash and shape, or -1. */
  #slotOf([w0, w1, w2, w3]: Words, shape: number): number {
    const mask = this.#slots.length - 1;
    for (let s = mix(w2, w3, shape) & mask; ; s = (s + 1) & mask) {
      const i = this.#slots[s];
      if (i === kEmpty) return -1;
      if (this.#w3[i] === w3 && this.#w2[i] === w2 && this.#w1[i] === w1 && this.#w0[i] === w0 && this.#shape[i] === shape) return s;
    }
  }

  #place(i: number): void {
    const mask = this.#slots.length - 1;
    let s = mix(this.#w2[i], this.#w3[i], this.#shape[i]) & mask;
    while (this.#slots[s] !== kEmpty) s = (s + 1) & mask;
    this.#slots[s] = i;
  }

  #grow(): void {
    const capacity = this.#w0.length * 2;
    const widen = <T extends Uint32Array | Float64Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(capacity);
      b.set(a);
      return b;
    };
    this.#w0 = widen(this.#w0);
    this.#w1 = widen(this.#w1);
    this.#w2 = widen(this.#w2);
    this.#w3 = widen(this.#w3);
    this.#shape = widen(this.#shape);
    this.#pack = widen(this.#pack);
    this.#offset = widen(this.#offset);
    this.#length = widen(this.#length);
    this.#slots = new Int32Array(capacity * 2).fill(kEmpty);
    for (let i = 0; i < this.#size; i++) this.#place(i);
  }
}

type Words = [number, number, number, number];

function parse(name: string): { words: Words; shape: string } | undefined {
  const m = kNameAroundHash.exec(name);
  if (!m) return undefined;
  const hex = m[2];
  const n = hex.length;
  const word = (end: number) => (end > 0 ? Number.parseInt(hex.slice(end - 8, end), 16) : 0);
  return { words: [word(n - 24), word(n - 16), word(n - 8), word(n)], shape: `${m[1]}/${n}/${m[3]}` };
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

/** The content hash is already uniform: its low words, stirred by the shape, pick the slot. */
const mix = (hi: number, lo: number, shape: number): number => (lo ^ Math.imul(hi, 0x9e3779b1) ^ Math.imul(shape, 0x85ebca6b)) >>> 0;
