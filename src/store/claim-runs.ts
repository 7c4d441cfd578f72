/**
 * The older claims of a ClaimTable (claim-table.ts), out of memory: sorted runs on disk, so that a
 * writer's memory stays flat however many names the writers of its directory claim. A run is a
 * file of 18-byte records sorted by fingerprint (hi, lo: 32 bits each; the line's offset, a
 * float64; the line's length and "mine" bit, 16 bits), little-endian. In memory a run keeps a Bloom
 * filter of its fingerprints (12 to 24 bits a record) and the first fingerprint of each page of
 * kPageRecords records: a lookup of a name no run holds reads nothing, one a run holds reads one
 * page. Runs merge as a binary counter does (a run merges into the one before it while that one
 * is no larger), so a table of n claims has at most log2(n / spill size) + 1 of them.
 *
 * A run's file is private to its writer: created exclusively (0600) beside the claim log as
 * `.claims-<random>.run` and unlinked at once, so it lives only as long as its descriptor and no
 * crash leaves it behind; where the platform refuses to unlink an open file, it is unlinked when
 * the run is let go of (merged, or the table collected).
 */
import { constants } from "node:fs";
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import { CtxfoldError } from "../errors.js";
import { errorCode, errorMessage, kStoreFileMode, openRegularFile, type FsOps } from "./fs-ops.js";

/** A claim as the table keeps it: its fingerprint, its line's offset, and the line's length with the "mine" bit. */
export interface ClaimRecord {
  hi: number;
  lo: number;
  offset: number;
  line: number;
}

const kRecordBytes = 18;
/** Records a fence stands for: a lookup reads one page (2,304 bytes). */
const kPageRecords = 128;
/** Records read or written at a time while merging. */
const kBlockRecords = kPageRecords * 32;
/** Bloom probes a lookup makes. */
const kProbes = 8;

interface Run {
  fd: number;
  /** The file's path while it is still linked (the platform refused to unlink it open). */
  file: string | undefined;
  count: number;
  /** hi, lo of each page's first record. */
  fences: Uint32Array;
  bloom: Uint32Array;
}

export class ClaimRuns {
  readonly #fs: FsOps;
  readonly #dir: string;
  /** Oldest and largest first. */
  readonly #runs: Run[] = [];
  /** What the collector closes when the table goes: every run open (kept, or being written). */
  readonly #open: { fs: FsOps; runs: Run[] };
  readonly #page = Buffer.alloc(kPageRecords * kRecordBytes);

  constructor(fs: FsOps, dir: string) {
    this.#fs = fs;
    this.#dir = dir;
    this.#open = { fs, runs: [] };
    kClosing.register(this, this.#open);
  }

  /** Runs on disk (tests, and the docs' figures). */
  get runs(): number {
    return this.#runs.length;
  }

  /**
   * Writes `count` records (sorted by fingerprint, none already in a run; the iterable may hand
   * out one object each time) as a new run, then merges runs no larger than the one after them.
   * E_STORE_WRITE when the run cannot be written (nothing kept of it); a merge that fails leaves
   * the runs as they were.
   */
  spill(count: number, records: Iterable<ClaimRecord>): void {
    if (count === 0) return;
    const run = this.#create(count);
    try {
      const out = new RunWriter(this.#fs, run, this.#where(run));
      for (const r of records) out.push(r.hi, r.lo, r.offset, r.line);
      out.end();
    } catch (err) {
      this.#release(run);
      throw err;
    }
    this.#runs.push(run);
    while (this.#runs.length >= 2 && this.#runs[this.#runs.length - 2].count <= this.#runs[this.#runs.length - 1].count) {
      const b = this.#runs.pop()!;
      const a = this.#runs.pop()!;
      let merged: Run;
      try {
        merged = this.#merge(a, b);
      } catch {
        // The new run is written and kept: a merge only keeps lookups few, and the next spill tries again.
        this.#runs.push(a, b);
        return;
      }
      this.#release(a);
      this.#release(b);
      this.#runs.push(merged);
    }
  }

  /** The claim of this fingerprint, or undefined when no run holds it. */
  get(hi: number, lo: number): ClaimRecord | undefined {
    for (const run of this.#runs) {
      if (!mayHold(run.bloom, hi, lo)) continue;
      const found = this.#find(run, hi, lo);
      if (found) return found;
    }
    return undefined;
  }

  #find(run: Run, hi: number, lo: number): ClaimRecord | undefined {
    // The last page whose first fingerprint is at or below this one.
    let a = 0;
    let b = run.fences.length / 2 - 1;
    if (compare(run.fences[0], run.fences[1], hi, lo) > 0) return undefined;
    while (a < b) {
      const m = (a + b + 1) >>> 1;
      if (compare(run.fences[2 * m], run.fences[2 * m + 1], hi, lo) <= 0) a = m;
      else b = m - 1;
    }
    const first = a * kPageRecords;
    const n = Math.min(kPageRecords, run.count - first);
    this.#read(run, this.#page, first, n);
    let low = 0;
    let high = n - 1;
    while (low <= high) {
      const m = (low + high) >>> 1;
      const at = m * kRecordBytes;
      const c = compare(this.#page.readUInt32LE(at), this.#page.readUInt32LE(at + 4), hi, lo);
      if (c === 0) return { hi, lo, offset: this.#page.readDoubleLE(at + 8), line: this.#page.readUInt16LE(at + 16) };
      if (c < 0) low = m + 1;
      else high = m - 1;
    }
    return undefined;
  }

  /** Merges two runs (no fingerprint in both) into a new one. */
  #merge(a: Run, b: Run): Run {
    const run = this.#create(a.count + b.count);
    try {
      const out = new RunWriter(this.#fs, run, this.#where(run));
      const read = (run: Run) => (into: Buffer, first: number, n: number) => this.#read(run, into, first, n);
      const ra = new RunReader(a.count, read(a));
      const rb = new RunReader(b.count, read(b));
      while (!ra.done || !rb.done) {
        const from = rb.done || (!ra.done && compare(ra.hi, ra.lo, rb.hi, rb.lo) < 0) ? ra : rb;
        out.push(from.hi, from.lo, from.offset, from.line);
        from.next();
      }
      out.end();
      return run;
    } catch (err) {
      this.#release(run);
      throw err;
    }
  }

  #read(run: Run, into: Buffer, first: number, n: number): void {
    const want = n * kRecordBytes;
    try {
      for (let done = 0; done < want; ) {
        const got = this.#fs.readSync(run.fd, into, done, want - done, first * kRecordBytes + done);
        if (got === 0) throw new CtxfoldError("E_CORRUPT", `${this.#where(run)} ends before its record ${first + n} (it holds ${run.count})`);
        done += got;
      }
    } catch (cause) {
      if (CtxfoldError.isInstance(cause)) throw cause;
      throw new CtxfoldError("E_STORE_READ", `cannot read ${this.#where(run)}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
    }
  }

  /** A new run's file: created exclusively, then unlinked (see the module comment). */
  #create(count: number): Run {
    const file = path.join(this.#dir, `.claims-${randomBytes(8).toString("hex")}.run`);
    let fd: number;
    try {
      fd = openRegularFile(this.#fs, file, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, kStoreFileMode);
    } catch (cause) {
      if (CtxfoldError.isInstance(cause)) throw cause;
      throw new CtxfoldError("E_STORE_WRITE", `cannot write ${file}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
    }
    let linked: string | undefined;
    try {
      this.#fs.unlinkSync(file);
    } catch {
      linked = file;
    }
    const pages = Math.max(1, Math.ceil(count / kPageRecords));
    const run: Run = { fd, file: linked, count, fences: new Uint32Array(2 * pages), bloom: new Uint32Array(bloomWords(count)) };
    this.#open.runs.push(run);
    return run;
  }

  /** Closes a run no longer kept (merged, or never finished). */
  #release(run: Run): void {
    const k = this.#open.runs.indexOf(run);
    if (k >= 0) this.#open.runs.splice(k, 1);
    closeRun(this.#fs, run);
  }

  #where(run: Run): string {
    return run.file ?? `a claim run (unlinked) in ${this.#dir}`;
  }
}

/** Appends records to a new run in blocks, filling its fences and Bloom filter. */
class RunWriter {
  readonly #block = Buffer.alloc(kBlockRecords * kRecordBytes);
  #n = 0;
  #written = 0;
  constructor(
    readonly fs: FsOps,
    readonly run: Run,
    readonly where: string,
  ) {}

  push(hi: number, lo: number, offset: number, line: number): void {
    const k = this.#written + this.#n;
    if (k % kPageRecords === 0) {
      this.run.fences[(2 * k) / kPageRecords] = hi;
      this.run.fences[(2 * k) / kPageRecords + 1] = lo;
    }
    addTo(this.run.bloom, hi, lo);
    const at = this.#n * kRecordBytes;
    this.#block.writeUInt32LE(hi, at);
    this.#block.writeUInt32LE(lo, at + 4);
    this.#block.writeDoubleLE(offset, at + 8);
    this.#block.writeUInt16LE(line, at + 16);
    if (++this.#n === kBlockRecords) this.#flush();
  }

  end(): void {
    this.#flush();
    if (this.#written !== this.run.count) throw new Error(`a claim run was written ${this.#written} records of ${this.run.count}`);
  }

  #flush(): void {
    const bytes = this.#n * kRecordBytes;
    try {
      for (let done = 0; done < bytes; ) done += this.fs.writeSync(this.run.fd, this.#block, done, bytes - done, this.#written * kRecordBytes + done);
    } catch (cause) {
      throw new CtxfoldError("E_STORE_WRITE", `cannot write ${this.where}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
    }
    this.#written += this.#n;
    this.#n = 0;
  }
}

/** Reads a run's records in order, a block at a time. */
class RunReader {
  readonly #block = Buffer.alloc(kBlockRecords * kRecordBytes);
  #next = 0;
  #inBlock = 0;
  #at = 0;
  hi = 0;
  lo = 0;
  offset = 0;
  line = 0;
  done = false;
  constructor(
    readonly count: number,
    readonly read: (into: Buffer, first: number, n: number) => void,
  ) {
    this.next();
  }

  next(): void {
    if (this.#next === this.count) {
      this.done = true;
      return;
    }
    if (this.#at === this.#inBlock) {
      this.#inBlock = Math.min(kBlockRecords, this.count - this.#next);
      this.read(this.#block, this.#next, this.#inBlock);
      this.#at = 0;
    }
    const at = this.#at * kRecordBytes;
    this.hi = this.#block.readUInt32LE(at);
    this.lo = this.#block.readUInt32LE(at + 4);
    this.offset = this.#block.readDoubleLE(at + 8);
    this.line = this.#block.readUInt16LE(at + 16);
    this.#at++;
    this.#next++;
  }
}

/** Orders fingerprints as unsigned (hi, lo) pairs. */
function compare(ahi: number, alo: number, bhi: number, blo: number): number {
  if (ahi !== bhi) return ahi < bhi ? -1 : 1;
  return alo === blo ? 0 : alo < blo ? -1 : 1;
}

/** A Bloom filter's 32-bit words for `count` fingerprints: a power of two of bits, 12 to 24 a fingerprint. */
function bloomWords(count: number): number {
  let bits = 64;
  while (bits < count * 12) bits *= 2;
  return bits / 32;
}

/** The filter's i-th probe of a fingerprint (double hashing over the two halves, mixed). */
function probe(bloom: Uint32Array, hi: number, lo: number, i: number): number {
  const h1 = lo ^ Math.imul(hi, 0x85ebca6b);
  const h2 = (hi ^ Math.imul(lo, 0xc2b2ae35)) | 1;
  return ((h1 + Math.imul(i, h2)) >>> 0) & (bloom.length * 32 - 1);
}

function addTo(bloom: Uint32Array, hi: number, lo: number): void {
  for (let i = 0; i < kProbes; i++) {
    const bit = probe(bloom, hi, lo, i);
    bloom[bit >>> 5] |= 1 << (bit & 31);
  }
}

function mayHold(bloom: Uint32Array, hi: number, lo: number): boolean {
  for (let i = 0; i < kProbes; i++) {
    const bit = probe(bloom, hi, lo, i);
    if ((bloom[bit >>> 5] & (1 << (bit & 31))) === 0) return false;
  }
  return true;
}

function closeRun(fs: FsOps, run: Run): void {
  try {
    fs.closeSync(run.fd);
  } catch {
    // Closing is all that is left to do with it.
  }
  if (run.file === undefined) return;
  try {
    fs.unlinkSync(run.file);
  } catch {
    // Gone already, or left to whoever clears the directory: it holds only fingerprints and offsets.
  }
  run.file = undefined;
}

/** Closes the runs of a table nobody holds any more (a store has no close(): its life is its holder's). */
const kClosing = new FinalizationRegistry<{ fs: FsOps; runs: Run[] }>(({ fs, runs }) => {
  for (const run of runs) closeRun(fs, run);
});
