import * as path from "node:path";
import { kNodeFsOps, readRegularFile, writeFileExclusive, type FsOps } from "./fs-ops.js";
import { ContentAddressedStore, type OffloadStoreOptions } from "./offload.js";

export interface FsStoreOptions extends OffloadStoreOptions {
  /**
   * The directory the files go in. @default path.resolve(prefix): a ref is then also the file's
   * path relative to the working directory, so an agent can read it back with its own file tool
   * (step reduction's retrieval pattern).
   */
  dir?: string;
  /** Replacements for some fs calls (tests). @default node:fs */
  fs?: Partial<FsOps>;
}

/**
 * Offloaded outputs as files, one per ref, named by content: a file, once there, never changes,
 * and a later process finds the files an earlier one wrote (put compares the bytes of an
 * existing file, so idempotence and collision handling hold across restarts).
 *
 * Writes are atomic and never replace a name (writeFileExclusive): the bytes go to
 * `.${name}.tmp-${pid}-${random}` in the same directory, created exclusively (`wx`), then link()
 * gives them the final name. A reader sees the whole file or none; on any failure the temp file is
 * removed and E_STORE_WRITE names the file and the OS error code, so a full disk never leaves a
 * truncated output under a valid ref. Temp names start with a dot and never match the ref
 * pattern, so even one left by a killed process is never served.
 *
 * Writers in other processes (runs, queue workers) sharing the directory: a name one of them
 * linked first is never replaced, so the link of another fails (EEXIST) and its put compares
 * the bytes there with its own, as for a file an earlier run left: equal, the same ref; different
 * (a collision), the next name of the chain. No lock is needed, and none is taken.
 *
 * Only regular files are read (readRegularFile): a link or a FIFO under a ref's name is refused
 * with E_CORRUPT, never followed; files are created 0600 and directories 0700.
 *
 * Not done, on purpose: fsync (outputs are a cache of what the agent saw, not a ledger; a power
 * loss may lose recent files, which then read as E_REF_NOT_FOUND, never as wrong bytes).
 */
export class FsOffloadStore extends ContentAddressedStore {
  /** The absolute directory the files are in. */
  readonly dir: string;
  readonly #fs: FsOps;
  /** Whether the directory is known to exist (created on the first write, again after a failed one). */
  #dirReady = false;

  constructor(options: FsStoreOptions = {}) {
    super(options);
    this.dir = path.resolve(options.dir ?? this.prefix);
    this.#fs = { ...kNodeFsOps, ...options.fs };
  }

  /** The file that holds `ref` (whether or not it exists yet); E_BAD_REF for a malformed ref. */
  pathOf(ref: string): string {
    return path.join(this.dir, this.checkRef(ref));
  }

  protected override whereIs(name: string): string {
    return path.join(this.dir, name);
  }

  protected load(name: string): Uint8Array | undefined {
    return readRegularFile(this.#fs, path.join(this.dir, name));
  }

  protected save(name: string, bytes: Uint8Array): boolean {
    try {
      const written = writeFileExclusive(this.#fs, path.join(this.dir, name), bytes, !this.#dirReady);
      this.#dirReady = true;
      return written;
    } catch (err) {
      this.#dirReady = false;
      throw err;
    }
  }

  protected exists(name: string): boolean {
    return this.#fs.existsSync(path.join(this.dir, name));
  }

  /** The directory's entries (none while it does not exist); temp files never match a store name. */
  protected names(): Iterable<string> {
    return this.#fs.existsSync(this.dir) ? this.#fs.readdirSync(this.dir) : [];
  }

  /** Nothing to write: every put is its own file, renamed into place before put returns. */
  flush(): void {}
}

export function createFsStore(options?: FsStoreOptions): FsOffloadStore {
  return new FsOffloadStore(options);
}

export type { FsOps };
