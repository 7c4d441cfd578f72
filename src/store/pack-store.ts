import { constants } from "node:fs";
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import { threadId } from "node:worker_threads";
import { CtxfoldError } from "../errors.js";
import { errorCode, errorMessage, kNodeFsOps, kStoreDirMode, kStoreFileMode, openRegularFile, readRegularFile, type FsOps } from "./fs-ops.js";
import { ClaimLog, kClaimLogName } from "./claim-log.js";
import { ContentAddressedStore, equalBytes, type OffloadStoreOptions } from "./offload.js";
import { PackIndex, type PackEntry } from "./pack-index.js";

export interface PackStoreOptions extends OffloadStoreOptions {
  /** The directory of the packs (created on the first flush). */
  dir: string;
  /** Replacements for some fs calls (tests). @default node:fs */
  fs?: Partial<FsOps>;
  /**
   * Entries a pack takes before the store starts a new one and lets go of the old one's index,
   * so that a worker's memory stays flat over a batch of any size. @default 65536
   */
  packEntries?: number;
  /**
   * Claims of the directory's writers (see the claim log) a store keeps in memory; older ones go
   * to sorted runs on disk, so a worker's memory stays flat however many names a batch claims. @default 65536
   */
  claimsInMemory?: number;
}

const kPackPattern = /^pack-[0-9a-z-]+\.bin$/;
/**
 * Digests kept (see holds): the repeats that pay are near each other (a file read again in one
 * run, the system prompt of the runs of a chunk), and a bound keeps a long batch's worker flat.
 */
const kDigests = 4096;
const kDefaultPackEntries = 1 << 16;
/**
 * Lookups in the packs let go of that are remembered (see #entry), the latest ones. A batch reads
 * the same few old entries again and again (a message stored once, then named by the refs a memo
 * hands out in every later run), and each unremembered lookup reads a whole index file.
 */
const kRetiredLookups = 4096;

/**
 * Offloaded outputs for batch work: the same refs as the other stores, but the bytes appended
 * to one pack file per store instance (`DIR/pack-<pid>-<thread>-<random>.bin`) with an index
 * beside it (`….idx`, one JSON line `[name, offset, length]` per entry). Storing a chunk's
 * outputs is then two appends, not a file (temp, write, rename) per output: on the batch
 * engine's runs, per-file stores spent most of their time in the kernel.
 *
 * Puts are buffered until `flush()` (the batch engine flushes before a chunk's output is
 * written, so every ref in the output resolves on disk). Pack bytes are written before their
 * index lines, so a crash leaves at most unindexed bytes, never an index entry without them.
 * A flush that fails (a full disk cutting a write short) must not leave its partial bytes where
 * the retry's offsets count from: see flush.
 * Reading (`get`, `has`) sees this instance's entries, every index in DIR (read once, on the
 * first lookup), and plain files named like refs in DIR (the FsOffloadStore layout), so
 * `ctxfold show` reads either layout. Packs, indexes and plain files are opened only as regular
 * files, never through a link (openRegularFile: E_CORRUPT naming the path); DIR itself may be a
 * link. Packs and indexes are created 0600, DIR 0700.
 *
 * Memory stays flat: once a pack holds `packEntries` entries the store starts a new pack and
 * keeps only the new one's index (PackIndex, ~40 bytes an entry) in memory. A put of bytes
 * that sit in a pack let go of stores them again (the same name, in the current pack: the
 * repeats that matter, such as a file read twice in one run, are near each other), and a read
 * of such an entry searches the let-go packs' index files on disk.
 *
 * Collisions (different bytes under one hash get `-1`, `-2`…, as in every store) are found over
 * the instance's own puts, its current pack and DIR as it was at the first lookup, and, for
 * writers storing into DIR at the same time (runs, pool or queue workers), through the claim log
 * (claim-log.ts): before a put hands out a name nobody held when it looked, the store appends its
 * claim and reads every claim before it, and takes the next name where another writer claimed
 * this one first for other bytes. A writer's buffered names are thus taken for every other
 * writer before its flush, and no two writers hand out one name for different bytes.
 */
export class PackOffloadStore extends ContentAddressedStore {
  readonly dir: string;
  readonly #fs: FsOps;
  #onDisk: PackIndex | undefined;
  /** Plain files in DIR named like refs (the FsOffloadStore layout), listed with the indexes. */
  readonly #plain = new Set<string>();
  readonly #pending = new Map<string, Uint8Array>();
  /** The current pack's entries (flushed). */
  #mine = new PackIndex();
  /** Packs this instance filled and let go of (see the class comment), oldest first. */
  readonly #retired: string[] = [];
  /** Where names looked up in the retired packs are (null: in none), the latest kRetiredLookups; cleared when a pack retires. */
  readonly #retiredLookups = new Map<string, PackEntry | null>();
  readonly #packEntries: number;
  /** The whole SHA-256 (contentDigestOf, never the name's 128 bits) of entries on disk already compared in full once (see holds), the latest kDigests. */
  readonly #digests = new Map<string, string>();
  /** The directory's claims, read and appended as puts hand out names no one held. */
  readonly #claims: ClaimLog;
  #pack: string | undefined;
  /** The pack's and the index's good lengths: complete entries and lines, all flushed. */
  #size = 0;
  #indexSize = 0;

  constructor(options: PackStoreOptions) {
    super(options);
    this.dir = path.resolve(options.dir);
    this.#fs = { ...kNodeFsOps, ...options.fs };
    this.#packEntries = positive(options, "packEntries") ?? kDefaultPackEntries;
    this.#claims = new ClaimLog(this.#fs, this.dir, positive(options, "claimsInMemory"));
  }

  /** The packs' indexes in DIR, read once. */
  #disk(): PackIndex {
    if (this.#onDisk) return this.#onDisk;
    const map = new PackIndex();
    const fs = this.#fs;
    const all = fs.existsSync(this.dir) ? fs.readdirSync(this.dir) : [];
    for (const f of all) if (!f.endsWith(".idx") && !kPackPattern.test(f) && !f.startsWith(".") && f !== kClaimLogName) this.#plain.add(f);
    for (const idx of all.filter((f) => f.endsWith(".idx")).sort()) {
      const pack = idx.replace(/\.idx$/, ".bin");
      if (!kPackPattern.test(pack)) continue;
      for (const [name, offset, length] of this.#indexLines(idx)) map.set(name, { pack, offset, length });
    }
    return (this.#onDisk = map);
  }

  /**
   * The entries an index file in DIR names, in order (none when it is absent). A line that is
   * JSON but not `[name, offset, length]` was never written by a store: E_CORRUPT naming the
   * index and the line, as for bytes that fail their hash.
   */
  *#indexLines(idx: string): Generator<[string, number, number]> {
    const file = path.join(this.dir, idx);
    const bytes = readRegularFile(this.#fs, file);
    if (bytes === undefined) return;
    const lines = Buffer.from(bytes).toString("utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]) continue;
      let entry: unknown;
      try {
        entry = JSON.parse(lines[i]);
      } catch {
        // a line cut short by a crash: its bytes were never referenced by written output
        continue;
      }
      if (!isIndexEntry(entry))
        throw new CtxfoldError("E_CORRUPT", `${file}:${i + 1}: not an index entry [name, offset, length] (changed after it was written)`);
      yield entry;
    }
  }

  /**
   * Where `name` is: the current pack, DIR's packs as they were at the first lookup, or (with
   * `retired`) a pack this instance let go of.
   */
  #entry(name: string, retired = true): PackEntry | undefined {
    const e = this.#mine.get(name) ?? this.#disk().get(name);
    if (e || !retired || this.#retired.length === 0) return e;
    const known = this.#retiredLookups.get(name);
    if (known !== undefined) {
      // The latest lookups stay: a hit moves to the back of the Map's order.
      this.#retiredLookups.delete(name);
      this.#retiredLookups.set(name, known);
      return known ?? undefined;
    }
    const found = this.#findRetired(name);
    if (this.#retiredLookups.size >= kRetiredLookups) this.#retiredLookups.delete(this.#retiredLookups.keys().next().value!);
    this.#retiredLookups.set(name, found ?? null);
    return found;
  }

  /** Where `name` is in the packs let go of, reading their index files. */
  #findRetired(name: string): PackEntry | undefined {
    for (const pack of this.#retired) {
      for (const [n, offset, length] of this.#indexLines(pack.replace(/\.bin$/, ".idx"))) if (n === name) return { pack, offset, length };
    }
    return undefined;
  }

  #read(e: PackEntry): Uint8Array {
    const file = path.join(this.dir, e.pack);
    try {
      const fd = openRegularFile(this.#fs, file, constants.O_RDONLY);
      try {
        const out = new Uint8Array(e.length);
        let done = 0;
        while (done < e.length) {
          const n = this.#fs.readSync(fd, out, done, e.length - done, e.offset + done);
          // The index names bytes the pack does not have: cut short, or the index changed.
          if (n === 0) throw new CtxfoldError("E_CORRUPT", `${file} ends before the end of an entry (offset ${e.offset}, length ${e.length})`);
          done += n;
        }
        return out;
      } finally {
        this.#fs.closeSync(fd);
      }
    } catch (cause) {
      if (CtxfoldError.isInstance(cause)) throw cause;
      throw new CtxfoldError("E_STORE_READ", `cannot read ${file}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
    }
  }

  protected load(name: string): Uint8Array | undefined {
    return this.#load(name, true);
  }

  /** What a put compares with: everything but the packs let go of (see the class comment). */
  protected override loadForPut(name: string): Uint8Array | undefined {
    return this.#load(name, false);
  }

  #load(name: string, retired: boolean): Uint8Array | undefined {
    const pending = this.#pending.get(name);
    if (pending) return pending;
    const e = this.#entry(name, retired);
    if (e) return this.#read(e);
    if (!this.#plain.has(name)) return undefined;
    return readRegularFile(this.#fs, path.join(this.dir, name));
  }

  protected override whereIs(name: string): string {
    if (this.#pending.has(name)) return `${name} (not yet flushed)`;
    const e = this.#entry(name);
    return e ? `${path.join(this.dir, e.pack)} (entry ${name} at offset ${e.offset}, length ${e.length})` : path.join(this.dir, name);
  }

  /**
   * A put of bytes already stored must prove them equal (the name may be a 64-bit hash of before,
   * or an injected one), which for an entry on disk means reading it back: the first time in
   * full, and then against the whole SHA-256 of those bytes, kept. Batch inputs repeat content (system prompts, files read in many
   * runs), and a read per repeat cost more than the rest of the put. The digest is kept only
   * after super.holds found the entry equal to bytes that hash to its name, so it never vouches for damaged
   * bytes; reads (`get`) always go to the pack, so damage after that first read is still caught.
   */
  protected override holds(name: string, bytes: Uint8Array): "free" | "same" | "other" {
    const pending = this.#pending.get(name);
    if (pending) return equalBytes(pending, bytes) ? "same" : "other";
    const known = this.#digests.get(name);
    if (known !== undefined) return this.contentDigestOf(bytes) === known ? "same" : "other";
    const held = super.holds(name, bytes);
    if (held === "same") {
      if (this.#digests.size >= kDigests) this.#digests.delete(this.#digests.keys().next().value!);
      this.#digests.set(name, this.contentDigestOf(bytes));
    }
    // Free here, but maybe claimed by another writer of DIR (its buffered puts are on no index).
    if (held === "free" && this.#claims.known(name, this.contentDigestOf(bytes)) === "other") return "other";
    return held;
  }

  /** Buffers the bytes once the name is claimed in DIR's claim log; false when another writer claimed it first for other bytes. */
  protected save(name: string, bytes: Uint8Array, owned: boolean): boolean {
    if (!this.#claims.claim(name, this.contentDigestOf(bytes))) return false;
    this.#pending.set(name, owned ? bytes : bytes.slice());
    return true;
  }

  /**
   * What this instance has put (flushed or not), DIR's indexes and plain files as they were at
   * its first lookup, and the packs it let go of (their index files, read again).
   */
  protected *names(): Iterable<string> {
    yield* this.#pending.keys();
    yield* this.#mine.names();
    yield* this.#disk().names();
    for (const pack of this.#retired) for (const [name] of this.#indexLines(pack.replace(/\.bin$/, ".idx"))) yield name;
    yield* this.#plain;
  }

  protected exists(name: string): boolean {
    // #entry first: it reads DIR's listing, which is what fills #plain.
    return this.#pending.has(name) || this.#entry(name) !== undefined || this.#plain.has(name);
  }

  /**
   * Writes the buffered puts to this instance's pack and index, at their good lengths.
   * E_STORE_WRITE naming the file and the OS code on failure; nothing is lost from the buffer,
   * and a later flush retries it.
   *
   * The writes go at the good lengths (positional, not O_APPEND), and a failed flush cuts the
   * index and then the pack back to them (ftruncate) before it throws: bytes a full disk cut
   * short would otherwise sit where the retry's offsets count from, and every later entry's line
   * would name wrong bytes. Where a cut fails, the retry goes to a new pack and index instead;
   * the old ones then hold past their good lengths only bytes no line names (the index was cut,
   * or never written) or lines naming complete bytes (the index write started after the pack's
   * finished, and the pack is cut only once the index was). No line ever names wrong bytes.
   */
  flush(): void {
    if (this.#pending.size === 0) return;
    this.#pack ??= `pack-${process.pid}-${threadId}-${randomBytes(4).toString("hex")}.bin`;
    const packFile = path.join(this.dir, this.#pack);
    const indexFile = packFile.replace(/\.bin$/, ".idx");
    const entries: [string, PackEntry][] = [];
    let at = this.#size;
    for (const [name, bytes] of this.#pending) {
      entries.push([name, { pack: this.#pack, offset: at, length: bytes.length }]);
      at += bytes.length;
    }
    const lines = Buffer.from(entries.map(([n, e]) => JSON.stringify([n, e.offset, e.length]) + "\n").join(""), "utf8");
    let file = packFile;
    try {
      this.#fs.mkdirSync(this.dir, { recursive: true, mode: kStoreDirMode });
      writeAt(this.#fs, packFile, Buffer.concat([...this.#pending.values()]), this.#size);
      file = indexFile;
      writeAt(this.#fs, indexFile, lines, this.#indexSize);
    } catch (cause) {
      if (!this.#cutBack(packFile, indexFile)) this.#startNewPack();
      throw new CtxfoldError("E_STORE_WRITE", `cannot write ${file}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
    }
    for (const [n, e] of entries) this.#mine.set(n, e);
    this.#size = at;
    this.#indexSize += lines.length;
    this.#pending.clear();
    if (this.#mine.size >= this.#packEntries) {
      this.#retired.push(this.#pack);
      this.#retiredLookups.clear(); // a name in none of them may be in this one
      this.#mine = new PackIndex();
      this.#startNewPack();
    }
  }

  /** Cuts the index, then the pack, back to their good lengths (see flush); false when a cut fails. */
  #cutBack(packFile: string, indexFile: string): boolean {
    try {
      cutTo(this.#fs, indexFile, this.#indexSize);
      cutTo(this.#fs, packFile, this.#size);
      return true;
    } catch {
      return false;
    }
  }

  /** Leaves the current pack and index as they are; the next flush names a new pair. Entries already flushed keep their pack. */
  #startNewPack(): void {
    this.#pack = undefined;
    this.#size = 0;
    this.#indexSize = 0;
  }
}

/** An optional count option: a positive integer, or E_BAD_INPUT naming it. */
function positive(options: PackStoreOptions, key: "packEntries" | "claimsInMemory"): number | undefined {
  const v = options[key];
  if (v !== undefined && (!Number.isInteger(v) || v < 1))
    throw new CtxfoldError("E_BAD_INPUT", `${key} must be a positive integer, got ${String(v)}`, { path: key });
  return v;
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isIndexEntry = (v: unknown): v is [string, number, number] =>
  Array.isArray(v) && v.length === 3 && typeof v[0] === "string" && isCount(v[1]) && isCount(v[2]);

/** Writes all of `bytes` at `position` in `file` (created kStoreFileMode), a short write continuing where it stopped. */
function writeAt(fs: FsOps, file: string, bytes: Uint8Array, position: number): void {
  const fd = openRegularFile(fs, file, constants.O_WRONLY | constants.O_CREAT, kStoreFileMode);
  try {
    for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done, bytes.length - done, position + done);
  } finally {
    fs.closeSync(fd);
  }
}

/** Cuts `file` back to `length` where it is longer; a file never created has nothing to cut. */
function cutTo(fs: FsOps, file: string, length: number): void {
  let fd: number;
  try {
    fd = openRegularFile(fs, file, constants.O_WRONLY);
  } catch (cause) {
    if (errorCode(cause) === "ENOENT") return;
    throw cause;
  }
  try {
    if (fs.fstatSync(fd).size > length) fs.ftruncateSync(fd, length);
  } finally {
    fs.closeSync(fd);
  }
}

export function createPackStore(options: PackStoreOptions): PackOffloadStore {
  return new PackOffloadStore(options);
}
