/**
 * Who stored what under a name in a pack store's directory, shared by every writer of it (runs,
 * pool workers, queue workers): `DIR/claims.log`, one line per name a writer took, appended
 * before its put returns the ref. A pack store buffers its puts until flush, so its index cannot
 * tell another writer which names it has handed out; without this, two writers that meet one
 * name with different bytes (a hash collision) would both hand it out, and readers would serve
 * one writer's bytes under the other's ref.
 *
 * A line is `\n<name> <digest> <writer>\n`: the whole SHA-256 of the bytes (64 hex digits) and
 * the writer's random id. Not the name's 128-bit content address: two contents that share a name
 * by a collision in those bits share it too, and the claim would take them for equal bytes. Lines
 * of before carry those 32 digits; a digest is compared with one of them on its first 32. Lines are
 * appended with O_APPEND in one write() each, so the file orders them the same for every reader,
 * and the first line naming a name is its owner: a writer whose claim comes later with another
 * digest takes the next name of the chain, one with the same digest stores its own copy (the
 * owner may never flush), and equal bytes stay one name. The leading newline keeps a line cut
 * short by a full disk from running into the next writer's line; malformed lines are skipped.
 * O_APPEND is atomic on local filesystems, not on NFS.
 *
 * Cost: a claim is one write() and one read() (of the lines appended since the last claim) on the
 * log, kept open from the first claim for the store's life (closed when the store is collected:
 * stores have no close()). Memory: the first claim of every name read is kept in a ClaimTable
 * (the line's offset stands in for the digest, read back only when another writer's claim is
 * met), the latest in memory and the older in runs on disk, so it stays flat; the whole log is
 * read once at the first claim.
 */
import { constants } from "node:fs";
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import { kContentAddressDigits } from "../core/content-address.js";
import { CtxfoldError } from "../errors.js";
import { errorCode, errorMessage, kStoreDirMode, kStoreFileMode, openRegularFile, type FsOps } from "./fs-ops.js";
import { kNamePattern } from "./names.js";
import { ClaimTable, kMaxClaimLine } from "./claim-table.js";

/** The claim log's file name in a pack store's directory. */
export const kClaimLogName = "claims.log";

/** A claim's digest: the whole SHA-256; the content address (its first 128 bits) in lines of before. */
const kDigestChars = 64;
const kOldDigestChars = kContentAddressDigits;

/** Whether two claim digests name the same bytes: compared on the digits both carry (a line of before has the first 32). */
const sameDigest = (a: string, b: string): boolean => (a.length === b.length ? a === b : a.slice(0, kOldDigestChars) === b.slice(0, kOldDigestChars));
const kWriterChars = 16;

export class ClaimLog {
  readonly #file: string;
  readonly #fs: FsOps;
  readonly #writer = randomBytes(kWriterChars / 2).toString("hex");
  /** First claim of each name read so far: its line's offset and length, and whether it is this writer's. */
  readonly #claims: ClaimTable;
  /** How far the log is read: up to the end of its last complete line. */
  #read = 0;
  /** Whether DIR is known to exist (made before the log is first opened, again after a failure). */
  #dirReady = false;
  /** The log, open for reading and appending (see #open), or undefined until the first claim. */
  #fd: number | undefined;

  /** `spillAt`: claims a reader keeps in memory before the older go to disk (ClaimSpill.at). */
  constructor(fs: FsOps, dir: string, spillAt?: number) {
    this.#fs = fs;
    this.#file = path.join(dir, kClaimLogName);
    this.#claims = new ClaimTable({ fs, dir, at: spillAt });
  }

  /**
   * Whether bytes of `digest` may go under `name`, from the claims read so far (the log is not
   * read for new lines; a known claim's line is read back for its digest): "same" when its first
   * claim, this writer's or another's, is for equal bytes, "other" for other bytes (a collision,
   * also with what this writer stored in a pack it let go of), "unclaimed" when none is known.
   */
  known(name: string, digest: string): "same" | "other" | "unclaimed" {
    const c = this.#claims.get(name);
    if (c === undefined) return "unclaimed";
    return sameDigest(this.#digestAt(c.offset, c.length), digest) ? "same" : "other";
  }

  /**
   * Claims `name` for bytes of `digest` (appending this writer's line unless it holds the claim
   * already) and reads the log up to that line: true when the name is this writer's to store
   * under (its claim is the first, or the first is another's for equal bytes), false when
   * another writer claimed it first for other bytes. E_STORE_WRITE when the line cannot be
   * appended, E_STORE_READ when the log cannot be read.
   */
  claim(name: string, digest: string): boolean {
    // Every line before this writer's is read after the append, so the log need not be read first.
    const seen = this.known(name, digest);
    if (seen !== "unclaimed") return seen === "same";
    const from = this.#read;
    this.#append(`\n${name} ${digest} ${this.#writer}\n`);
    this.#readNew();
    const first = this.#claims.get(name);
    if (first === undefined) throw new CtxfoldError("E_STORE_WRITE", `cannot write ${this.#file}: the claim of ${name} is not in it after it was appended`);
    // The line just appended (this writer's, past what was read before) is first: no need to read it back.
    if (first.mine && first.offset >= from) return true;
    return sameDigest(this.#digestAt(first.offset, first.length), digest);
  }

  /** The log, opened once (read and append) and kept: a claim is then two calls, a write and a read. */
  #open(): number {
    if (this.#fd !== undefined) return this.#fd;
    if (!this.#dirReady) this.#fs.mkdirSync(path.dirname(this.#file), { recursive: true, mode: kStoreDirMode });
    this.#dirReady = true;
    const fd = openRegularFile(this.#fs, this.#file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT, kStoreFileMode);
    kClosing.register(this, { fs: this.#fs, fd }, this);
    return (this.#fd = fd);
  }

  /** Closes the log after a failure, so the next claim opens it again (DIR made again if need be). */
  #drop(): void {
    if (this.#fd !== undefined) closeQuietly(this.#fs, this.#fd);
    kClosing.unregister(this);
    this.#fd = undefined;
    this.#dirReady = false;
  }

  #append(line: string): void {
    const bytes = Buffer.from(line, "utf8");
    try {
      // One write(): O_APPEND places it whole at the end. A short one (a full disk) is a failure.
      const n = this.#fs.writeSync(this.#open(), bytes, 0, bytes.length, null);
      if (n !== bytes.length) throw Object.assign(new Error(`wrote ${n} of ${bytes.length} bytes`), { code: "ENOSPC" });
    } catch (cause) {
      this.#drop();
      if (CtxfoldError.isInstance(cause)) throw cause;
      throw new CtxfoldError("E_STORE_WRITE", `cannot write ${this.#file}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
    }
  }

  /** Reads the lines appended since the last read, keeping the first claim of each name. */
  #readNew(): void {
    const bytes = this.#readFrom(this.#read);
    const end = bytes.lastIndexOf(0x0a) + 1;
    let at = 0;
    while (at < end) {
      const nl = bytes.indexOf(0x0a, at);
      this.#take(bytes.subarray(at, nl), this.#read + at);
      at = nl + 1;
    }
    this.#read += end;
  }

  /** Keeps one line's claim when it is well-formed and the first for its name. */
  #take(line: Uint8Array, offset: number): void {
    if (line.length === 0) return;
    const [name, digest, writer, ...rest] = Buffer.from(line.buffer, line.byteOffset, line.length).toString("utf8").split(" ");
    if (
      rest.length > 0 ||
      (digest?.length !== kDigestChars && digest?.length !== kOldDigestChars) ||
      writer?.length !== kWriterChars ||
      line.length > kMaxClaimLine ||
      !kNamePattern.test(name)
    )
      return;
    this.#claims.add(name, offset, line.length, writer === this.#writer);
  }

  /** The digest of the claim line at `offset`. */
  #digestAt(offset: number, length: number): string {
    const bytes = this.#readFrom(offset, length);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8").split(" ")[1] ?? "";
  }

  /**
   * The log's bytes from `offset`: `length` of them, or (undefined) all to its end, read in
   * blocks. Read in one block, they are the thread's read scratch: valid until the next read.
   */
  #readFrom(offset: number, length?: number): Uint8Array {
    try {
      const fd = this.#open();
      const blocks: Uint8Array[] = [];
      for (let at = offset; ; ) {
        const want = length === undefined ? kReadBlock : offset + length - at;
        const block = want <= kScratch.length ? kScratch : new Uint8Array(want);
        let n = 0;
        while (n < want) {
          const got = this.#fs.readSync(fd, block, n, want - n, at + n);
          n += got;
          // A short read of a regular file is its end (for now): one read() is a claim's usual all.
          if (got === 0 || length === undefined) break;
        }
        at += n;
        // What one read got is returned in place (the caller is done with it before the next
        // read); a read of several blocks keeps a copy of each, the scratch being read into again.
        if (n < want || length !== undefined) {
          if (blocks.length === 0) return block.subarray(0, n);
          blocks.push(block.subarray(0, n));
          break;
        }
        blocks.push(block.slice(0, n));
      }
      return Buffer.concat(blocks);
    } catch (cause) {
      this.#drop();
      if (CtxfoldError.isInstance(cause)) throw cause;
      throw new CtxfoldError("E_STORE_READ", `cannot read ${this.#file}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
    }
  }
}

/** Bytes a read of the log's new lines asks for at a time (a claim's read is usually one line). */
const kReadBlock = 64 * 1024;
/** What reads go into (one per thread: reads are synchronous, and their bytes used before the next). */
const kScratch = new Uint8Array(kReadBlock);

function closeQuietly(fs: FsOps, fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Closing is all that is left to do with it.
  }
}

/** Closes the log of a store nobody holds any more (a store has no close(): its life is its holder's). */
const kClosing = new FinalizationRegistry<{ fs: FsOps; fd: number }>(({ fs, fd }) => closeQuietly(fs, fd));
