/**
 * Where shards and their results travel between the producer and the workers: shared storage
 * every machine reaches, never Redis (which carries only job metadata). A job names its storage
 * by URL (`file:///mnt/shared/out.jsonl.work`), which a worker admits only inside its --work-dir
 * (confine.ts), so a backend for another scheme (an S3-compatible bucket: `s3://bucket/prefix`)
 * is a second ShardStorage that confine.ts admits under a root of its own kind.
 *
 * Names are content-derived (shardId): a shard written twice holds the same bytes, and a result
 * is kept from its first writer, so a shard retried after a worker stalled is never written twice.
 */
import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { CtxfoldError } from "../errors.js";
import { errorCode, errorMessage, kNodeFsOps, kStoreDirMode, kStoreFileMode, readRegularFile, writeFileAtomic } from "../store/fs-ops.js";

export interface ShardStorage {
  /** The URL a job carries, from which a worker opens the same storage on any machine (confine.ts). */
  readonly url: string;
  /** Fails with E_WORK_DIR, naming the place and the reason, when it cannot be written. */
  probe(): void;
  putShard(id: string, bytes: Uint8Array): void;
  /** A shard's bytes, or undefined when there is none (its run finished, or was started afresh). */
  readShard(id: string): Uint8Array | undefined;
  /** Stores a shard's result unless one is there already (the first writer's is kept). */
  putResult(id: string, bytes: Uint8Array): void;
  readResult(id: string): Uint8Array | undefined;
  /** Where a shard's result lies, as messages name it. */
  resultName(id: string): string;
  /** Removes a shard and its result (done with). */
  remove(id: string): void;
  /** Removes every shard and result (a fresh start). */
  clear(): void;
}

/** A work directory: `shards/ID.jsonl` and `results/ID.result`, written atomically. */
export class DirStorage implements ShardStorage {
  readonly url: string;
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = path.resolve(dir);
    this.url = pathToFileURL(this.#dir).href;
  }

  probe(): void {
    const probe = path.join(this.#dir, `.probe-${process.pid}`);
    this.#io("write", this.#dir, () => {
      mkdirSync(this.#dir, { recursive: true, mode: kStoreDirMode });
      writeFileSync(probe, "", { mode: kStoreFileMode });
      unlinkSync(probe);
    });
  }

  putShard(id: string, bytes: Uint8Array): void {
    this.#io("write", this.#shard(id), () => writeFileAtomic(kNodeFsOps, this.#shard(id), bytes));
  }

  readShard(id: string): Uint8Array | undefined {
    return this.#io("read", this.#shard(id), () => readRegularFile(kNodeFsOps, this.#shard(id)));
  }

  putResult(id: string, bytes: Uint8Array): void {
    const file = this.#result(id);
    // Written whole under a name of this writer's, then linked: a reader sees all of it or none,
    // and a second writer's link finds the first's result there and leaves it.
    const temp = `${file}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`;
    this.#io("write", file, () => {
      mkdirSync(path.dirname(file), { recursive: true, mode: kStoreDirMode });
      writeFileSync(temp, bytes, { flag: "wx", mode: kStoreFileMode });
      try {
        linkSync(temp, file);
      } catch (err) {
        if (errorCode(err) !== "EEXIST") throw err;
      } finally {
        unlinkSync(temp);
      }
    });
  }

  readResult(id: string): Uint8Array | undefined {
    return this.#io("read", this.#result(id), () => readRegularFile(kNodeFsOps, this.#result(id)));
  }

  resultName(id: string): string {
    return this.#result(id);
  }

  remove(id: string): void {
    for (const file of [this.#shard(id), this.#result(id)]) this.#io("write", file, () => rmSync(file, { force: true }));
  }

  clear(): void {
    for (const sub of ["shards", "results"]) {
      const dir = path.join(this.#dir, sub);
      this.#io(
        "write",
        dir,
        () => {
          for (const name of readdirSync(dir, { withFileTypes: true })) if (name.isFile()) rmSync(path.join(dir, name.name), { force: true });
        },
        true,
      );
    }
  }

  #shard = (id: string) => path.join(this.#dir, "shards", `${id}.jsonl`);
  #result = (id: string) => path.join(this.#dir, "results", `${id}.result`);

  /** `f`, its failure E_WORK_DIR naming `file` and the OS code (`missingOk`: ENOENT is nothing to do). */
  #io<T>(what: "read" | "write", file: string, f: () => T, missingOk = false): T {
    try {
      return f();
    } catch (cause) {
      if (missingOk && errorCode(cause) === "ENOENT") return undefined as T;
      const why = CtxfoldError.isInstance(cause) ? cause.message : `cannot ${what} ${file}: ${errorCode(cause)} (${errorMessage(cause)})`;
      throw new CtxfoldError("E_WORK_DIR", `${why} (the work dir ${this.#dir})`, { cause });
    }
  }
}
