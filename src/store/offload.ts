import { contentAddress, kContentAddressDigits, kLegacyAddressDigits, legacyContentAddress, sha256Hex } from "../core/content-address.js";
import { hashToHex } from "../core/hash.js";
import { CtxfoldError } from "../errors.js";
import { kNamePattern, kNameShape, sanitizeExt, sanitizeKind } from "./names.js";
import { decodeText, encodeText } from "./text.js";

export { kNameShape, parseRef, refPattern, sanitizeExt, sanitizeKind, type RefParts } from "./names.js";
export { decodeText, encodeText } from "./text.js";

/**
 * Where reduction puts the full output of a step it replaces with one line (step reduction's
 * DataOffloader): `put` stores the bytes and returns a ref, the reduced step keeps the ref, and
 * `get(ref)` gives the exact bytes back when the agent or a runner needs them.
 *
 * Deliberately synchronous. The step reducer calls `put` inline while it reduces, and the
 * outputs are small files: a write to a temp file and an atomic rename cost tens of
 * microseconds, so an async interface would only force the whole reduction to become async for
 * nothing. A runner that wants remote storage (S3, a database) reduces into a memory store and
 * uploads `refs()` afterwards, rather than making compaction wait on the network.
 *
 * Content-addressed: the ref names the content address of the stored bytes (SHA-256 cut to 128
 * bits, src/core/content-address.ts), so the same output stored twice costs nothing and a ref
 * always means the same bytes.
 */
export interface OffloadStore {
  /** Stores `data` (a string as UTF-8, see encodeText) and returns its ref. Idempotent. */
  put(data: Uint8Array | string, hint?: OffloadHint): string;
  /** The stored bytes, exactly. Throws E_BAD_REF for a ref this store cannot have made, E_REF_NOT_FOUND when absent. */
  get(ref: string): Uint8Array;
  /** The stored bytes as text; `getText(put(s)) === s` for every string, lone surrogates included. */
  getText(ref: string): string;
  /** Whether `ref` is stored here; false (never a throw) for a malformed ref. */
  has(ref: string): boolean;
  /**
   * Writes what `put` has only buffered, so every ref returned so far resolves for any reader of
   * the store's backing (another process, a later run), not only through this instance. A caller
   * must flush before it writes an output naming the refs (a compacted run, an output file):
   * output whose refs do not resolve must never be written. Stores that write each put at once
   * (memory, per-file) have nothing to do; the pack store writes its buffered packs; a wrapping
   * store forwards to the store it wraps. Throws E_STORE_WRITE when the write fails (nothing
   * buffered is lost: a later flush retries it).
   */
  flush(): void;
  /**
   * Every ref the store holds (what recall's search lists). Optional: a store that cannot list
   * what it holds (one over a remote key-value service) leaves it out, and only search then
   * fails (storeRefs). The stores here list from what they already keep (the memory map, the
   * directory, the packs' indexes), so puts cost nothing more for it.
   */
  refs?(): string[];
  /** What every ref starts with (before the `/`), e.g. `workspace/outputs`. */
  readonly prefix: string;
}

/** What every store answers for a ref it does not hold (a scoped store for one outside its scope alike, so the two cannot be told apart). */
export function refNotFound(ref: string): CtxfoldError {
  return new CtxfoldError("E_REF_NOT_FOUND", `no offloaded output at ${JSON.stringify(ref)}`);
}

/** `store.refs()`, or E_BAD_INPUT naming a store that cannot list what it holds. */
export function storeRefs(store: OffloadStore): string[] {
  if (typeof store.refs !== "function") {
    throw new CtxfoldError(
      "E_BAD_INPUT",
      "this offload store cannot list what it holds (it has no refs() method): refs it made still resolve, but it cannot be searched",
      { path: "store" },
    );
  }
  return store.refs();
}

/** What the stored output is, for the ref's file name only (the bytes do not depend on it). */
export interface OffloadHint {
  /** The kind of output: read, search, shell, page, list, output. @default "output" */
  kind?: string;
  /** The file extension without the dot: json, txt, log, py. @default "txt" */
  ext?: string;
}

export interface OffloadStoreOptions {
  /** What refs start with. @default "workspace/outputs" (step reduction's paths) */
  prefix?: string;
  /**
   * A 64-bit hash to name content by instead of the content address: names then carry its 16
   * hex digits, the width of the XXH64 names stores wrote before, and 16-digit names are verified
   * with it. For tests, which inject a weak one to force collisions, and to write a store in the
   * layout of before; 32-digit names are always verified by their content address.
   * @default undefined: names carry the content address (SHA-256, 128 bits), and 16-digit names
   * of stores written before are verified by XXH64 (seed 0)
   */
  hash?: (bytes: Uint8Array) => bigint;
}

/** Step reduction's output directory, relative to the agent's working directory. */
export const kDefaultOffloadPrefix = "workspace/outputs";

export const equalBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(a, b) === 0;

function typeOf(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

/**
 * The naming, hashing, collision and ref-checking logic every store shares; a store supplies
 * three primitives over bare file names (`kind_hash[-n].ext`, already validated).
 *
 * Collisions: when the hash name is taken by different bytes (compared in full, never trusted
 * from the hash), `-1`, `-2`, … follow; `put` takes the first free name or the first holding
 * equal bytes, so storing the same bytes again finds its earlier ref wherever it landed. A name
 * free when `put` looked may be taken before `save` claims it, by another process or worker
 * writing the same directory: `save` then says so (it never replaces what another writer stored)
 * and `put` looks at that name again, comparing as above.
 *
 * Verified reads: every stored entry is read through one check (#verify), `get`, `getText` and
 * put's comparison alike (bytes equal to the ones put hash to the name by construction; unequal
 * ones are checked): the bytes must hash to the hash their name carries, or the read
 * throws E_CORRUPT naming where they are (whereIs: a file, or a pack with the entry's offset and
 * length), never the bytes. A file flipped by a disk, an index edited by hand or a pack cut short
 * then fails loudly instead of handing an agent another output under the ref. The name's width
 * says which hash: 32 hex digits, the content address (SHA-256, ~1-2 GB/s); 16, XXH64 (or the
 * injected hash), as stores wrote before. Either costs little beside the read itself.
 *
 * A put whose name holds corrupt bytes throws the same E_CORRUPT, in every store. It does not
 * take the bytes for a collision and move on to `-1` (the ref would then depend on damage), and it
 * does not repair by rewriting: the store cannot know what the entry held (in a chain it may have
 * been other bytes under the same hash, which refs already written name), and damage is a sign of
 * a failing disk or of tampering that the operator should see rather than have papered over.
 * Removing the damaged file (or the pack and its index) and storing again is the repair.
 */
export abstract class ContentAddressedStore implements OffloadStore {
  readonly prefix: string;
  /** The address new names carry: the content address, or the injected hash's 16 hex digits. */
  readonly #address: (bytes: Uint8Array) => string;
  /** What verifies a 16-digit name: XXH64, or the injected hash. */
  readonly #legacy: (bytes: Uint8Array) => string;
  #savedBytes = 0;
  /** The bytes of the put under way and their SHA-256, once computed (contentAddressOf, contentDigestOf). */
  #current: { bytes: Uint8Array; digest: string } | undefined;

  constructor(options: OffloadStoreOptions = {}) {
    const raw: unknown = options.prefix ?? kDefaultOffloadPrefix;
    if (typeof raw !== "string") throw new CtxfoldError("E_BAD_INPUT", `expected a string, got ${typeOf(raw)}`, { path: "prefix" });
    const prefix = raw.replace(/\/+$/, "");
    if (prefix === "" || prefix.includes("\0")) {
      throw new CtxfoldError("E_BAD_INPUT", `prefix must be a non-empty path, got ${JSON.stringify(options.prefix)}`, { path: "prefix" });
    }
    this.prefix = prefix;
    const hash = options.hash;
    this.#legacy = hash ? (bytes) => hashToHex(BigInt.asUintN(64, hash(bytes))) : legacyContentAddress;
    this.#address = hash ? this.#legacy : (bytes) => this.contentAddressOf(bytes);
  }

  /**
   * The content address of `bytes`, the bytes of the put under way: computed once a put, for
   * its name and for what a store compares by digest (the pack store's claims and repeats).
   */
  protected contentAddressOf(bytes: Uint8Array): string {
    return this.contentDigestOf(bytes).slice(0, kContentAddressDigits);
  }

  /**
   * The whole SHA-256 of `bytes` (64 hex digits), the bytes of the put under way: what stands
   * for bytes where they are compared by digest (the pack store's claims and repeats). Not the
   * content address: two contents that share a name by a collision in its 128 bits share that
   * address too, and a digest equal to the name's own hash would call them equal.
   */
  protected contentDigestOf(bytes: Uint8Array): string {
    if (this.#current?.bytes !== bytes) this.#current = { bytes, digest: sha256Hex(bytes) };
    return this.#current.digest;
  }

  /** The stored bytes of `name`, or undefined when absent. May return the store's own array. */
  protected abstract load(name: string): Uint8Array | undefined;
  /** What a put compares its bytes with (load, unless a store puts again what it has let go of). */
  protected loadForPut(name: string): Uint8Array | undefined {
    return this.load(name);
  }

  /** Every name held, in any order (repeats and names that are not store names are ignored). */
  protected abstract names(): Iterable<string>;

  /**
   * Stores `bytes` under a name that was free when `holds` looked; false, storing nothing, when
   * another writer of the same backing has taken the name since (put then looks at it again).
   * Never replaces what is stored under the name. `owned`: the array is the store's own (a
   * string put, encoded here), kept as it is; otherwise it is the caller's, to copy if kept.
   */
  protected abstract save(name: string, bytes: Uint8Array, owned: boolean): boolean;
  protected abstract exists(name: string): boolean;
  /** See OffloadStore.flush: each store says whether it buffers. */
  abstract flush(): void;

  /** Bytes this instance stored under names that were free: what its puts added to the store. */
  get savedBytes(): number {
    return this.#savedBytes;
  }

  /** Where the bytes of `name` are, for error messages: a file, a pack and an offset. */
  protected whereIs(name: string): string {
    return `${this.prefix}/${name}`;
  }

  put(data: Uint8Array | string, hint?: OffloadHint): string {
    let bytes: Uint8Array;
    if (typeof data === "string") bytes = encodeText(data);
    else if (data instanceof Uint8Array) bytes = data;
    else throw new CtxfoldError("E_NOT_BYTES", `expected a string or a Uint8Array, got ${typeOf(data)}`, { path: "data" });
    this.#current = undefined; // the caller may have changed the array it put last
    const stem = `${sanitizeKind(hint?.kind)}_${this.#address(bytes)}`;
    const ext = sanitizeExt(hint?.ext);
    for (let n = 0; ; ) {
      const name = n === 0 ? `${stem}.${ext}` : `${stem}-${n}.${ext}`;
      const held = this.holds(name, bytes);
      if (held === "other") {
        n++;
        continue;
      }
      if (held === "free") {
        // Taken by another writer since holds looked: look at the same name again.
        if (!this.save(name, bytes, typeof data === "string")) continue;
        this.#savedBytes += bytes.length;
      }
      return `${this.prefix}/${name}`;
    }
  }

  /**
   * Whether `name` is free, holds exactly `bytes`, or holds other bytes (a hash collision).
   * Compares in full; a store whose reads are costly may answer from a cryptographic digest
   * of bytes it has compared before.
   */
  protected holds(name: string, bytes: Uint8Array): "free" | "same" | "other" {
    const existing = this.loadForPut(name);
    if (existing === undefined) return "free";
    // put names `bytes` by their own hash, so stored bytes equal to them hash to the name too:
    // only unequal ones need the check that tells a collision from damage.
    if (equalBytes(existing, bytes)) return "same";
    this.#verify(name, existing);
    return "other";
  }

  /** A fresh copy of the stored bytes: the caller may change it without touching the store. */
  get(ref: string): Uint8Array {
    return new Uint8Array(this.#load(ref));
  }

  getText(ref: string): string {
    return decodeText(this.#load(ref));
  }

  has(ref: string): boolean {
    const name = this.nameOf(ref);
    return name !== undefined && this.exists(name);
  }

  /** Every ref held (see OffloadStore.refs), each once. Reads nothing but names: a ref's bytes are verified when read. */
  refs(): string[] {
    const out = new Set<string>();
    for (const name of this.names()) if (kNamePattern.test(name)) out.add(`${this.prefix}/${name}`);
    return [...out];
  }

  /** The bare file name of a ref this store could have made, or undefined. */
  protected nameOf(ref: unknown): string | undefined {
    if (typeof ref !== "string" || !ref.startsWith(`${this.prefix}/`)) return undefined;
    const name = ref.slice(this.prefix.length + 1);
    return kNamePattern.test(name) ? name : undefined;
  }

  /** The file name of `ref`, or E_BAD_REF: nothing reaches a path that did not pass kNamePattern. */
  protected checkRef(ref: string): string {
    const name = this.nameOf(ref);
    if (name === undefined) {
      const shown = typeof ref === "string" ? JSON.stringify(ref) : typeOf(ref);
      throw new CtxfoldError("E_BAD_REF", `not a ref of this store (${this.prefix}/${kNameShape}): ${shown}`);
    }
    return name;
  }

  #load(ref: string): Uint8Array {
    const bytes = this.#loadVerified(this.checkRef(ref));
    if (bytes === undefined) throw refNotFound(ref);
    return bytes;
  }

  /** The stored bytes of `name` (undefined when absent), or E_CORRUPT when they do not hash to its name. */
  #loadVerified(name: string): Uint8Array | undefined {
    const bytes = this.load(name);
    if (bytes !== undefined) this.#verify(name, bytes);
    return bytes;
  }

  /** E_CORRUPT unless `bytes`, stored under `name`, hash to the hash the name carries. */
  #verify(name: string, bytes: Uint8Array): void {
    const named = kNamePattern.exec(name)?.[1];
    const actual = named?.length === kLegacyAddressDigits ? this.#legacy(bytes) : contentAddress(bytes);
    if (actual !== named) {
      throw new CtxfoldError(
        "E_CORRUPT",
        `${this.whereIs(name)}: the stored bytes hash to ${actual}, not to ${named} as the name says (changed after they were stored)`,
      );
    }
  }
}

/**
 * A store seen through a wrapper that changes what `put` does (counting what is new,
 * redacting); reads and flushes go to the store it wraps.
 */
export abstract class StoreView implements OffloadStore {
  constructor(readonly inner: OffloadStore) {}

  get prefix(): string {
    return this.inner.prefix;
  }

  abstract put(data: Uint8Array | string, hint?: OffloadHint): string;

  get(ref: string): Uint8Array {
    return this.inner.get(ref);
  }

  getText(ref: string): string {
    return this.inner.getText(ref);
  }

  has(ref: string): boolean {
    return this.inner.has(ref);
  }

  /** The wrapped store's refs (E_BAD_INPUT when it cannot list them: storeRefs). */
  refs(): string[] {
    return storeRefs(this.inner);
  }

  flush(): void {
    this.inner.flush();
  }
}

/**
 * Offloaded outputs in memory: the store for tests, for one-shot CLI runs, and for a runner that
 * ships the outputs elsewhere after compaction (`refs()` lists them, `get` gives the bytes).
 */
export class MemoryOffloadStore extends ContentAddressedStore {
  readonly #files = new Map<string, Uint8Array>();
  #size = 0;

  /** Bytes held. */
  get size(): number {
    return this.#size;
  }

  /** Its names in the order first stored, so refs() lists them in that order. */
  protected names(): Iterable<string> {
    return this.#files.keys();
  }

  protected load(name: string): Uint8Array | undefined {
    return this.#files.get(name);
  }

  /** Always true: the map has no other writer. */
  protected save(name: string, bytes: Uint8Array, owned: boolean): boolean {
    // The caller's array is copied: the caller may reuse it, and a Buffer becomes a plain Uint8Array.
    this.#files.set(name, owned ? bytes : new Uint8Array(bytes));
    this.#size += bytes.length;
    return true;
  }

  protected exists(name: string): boolean {
    return this.#files.has(name);
  }

  /** Nothing to write: every put is held at once. */
  flush(): void {}
}

export function createMemoryStore(options?: OffloadStoreOptions): MemoryOffloadStore {
  return new MemoryOffloadStore(options);
}
