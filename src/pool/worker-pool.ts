/**
 * Where the batch's chunks are compacted: in-process, or in a Piscina pool of workers. In the
 * pool, a chunk whose worker dies is retried once in a fresh worker, then written through with
 * an E_WORKER_CRASH record per run; an error a worker returns (such as E_STORE_WRITE) is
 * rebuilt here and stops the batch as it does in-process, so only a death counts as a crash; a
 * worker that dies outside a chunk stops the batch.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { getCoreModule } from "../core/load-core.js";
import { packRankTable, type SharedRankTable } from "../tokens/bpe.js";
import { kDefaultEncoding } from "../tokens/token-counter.js";
import { CtxfoldError } from "../errors.js";
import { isBlankLine, linesOf } from "./input.js";
import { compactChunk, emptyStats, unpack, type ChunkResult, type ErrorRecord, type JobOptions } from "./job.js";
import type { CrashHook, WorkerData, WorkerReply, WorkerTask } from "./worker.js";

/**
 * A worker's V8 young generation, MB, when its heap is limited (BatchOptions.workerHeapMb). At 8
 * a worker scavenged ~4× as often per run as the main thread does (~1 s of its CPU on 64 MB of
 * unique runs); 16 halves that for ~7% less wall time, and with the rank table shared the peak
 * RSS of 2 workers stays under 300 MB (docs/batch.md, "Where the cores go").
 */
const kWorkerYoungHeapMb = 16;

/** Compacts chunks, in-process or in workers; the batch engine writes their results in order. */
export interface ChunkRunner {
  /** Worker threads (0: in-process). */
  readonly workers: number;
  /** Chunks in flight at most: reading waits for a free slot, so memory stays bounded. */
  readonly capacity: number;
  /** Chunks retried after a worker died, and chunks written through after the retry died too. */
  readonly retried: number;
  readonly crashed: number;
  /** Chunk number `chunk` (from 0), whose first line is number `firstLine` of the input. */
  run(bytes: Uint8Array, firstLine: number, chunk: number): Promise<ChunkResult>;
  close(): Promise<void>;
}

/** Chunks compacted one at a time on this thread. */
export function inProcessRunner(job: JobOptions): ChunkRunner {
  return {
    workers: 0,
    capacity: 1,
    retried: 0,
    crashed: 0,
    run: (bytes, firstLine) => compactChunk(bytes, firstLine, job),
    close: async () => undefined,
  };
}

export interface PoolRunnerOptions {
  workers: number;
  /** Each worker's V8 old-generation limit, MB; 0 leaves V8's defaults. */
  heapMb: number;
  /** A worker to exit mid-chunk (tests of crash recovery). @default none */
  crash?: CrashHook;
}

/** Chunks compacted in a Piscina pool of `workers` threads, at most two per worker in flight. */
export class PoolRunner implements ChunkRunner {
  readonly workers: number;
  readonly capacity: number;
  retried = 0;
  crashed = 0;
  readonly #job: JobOptions;
  readonly #heapMb: number;
  readonly #pool: Piscina;
  /** The exact counter's rank table, packed once here and shared by every worker (~25 MB and ~0.1 s each otherwise). */
  readonly #ranks: SharedRankTable;
  /** Set when a worker died outside a chunk: the batch stops with it. */
  #failure: CtxfoldError | undefined;

  constructor(job: JobOptions, options: PoolRunnerOptions) {
    this.#job = job;
    this.workers = options.workers;
    this.capacity = 2 * options.workers;
    this.#heapMb = options.heapMb;
    const filename = workerFile();
    const workerData: WorkerData = { coreModule: getCoreModule(), heapMb: options.heapMb, ...(options.crash ? { crash: options.crash } : {}) };
    this.#pool = new Piscina({
      filename,
      minThreads: options.workers,
      maxThreads: options.workers,
      idleTimeout: 60_000,
      workerData,
      ...(options.heapMb > 0 ? { resourceLimits: { maxOldGenerationSizeMb: options.heapMb, maxYoungGenerationSizeMb: kWorkerYoungHeapMb } } : {}),
    });
    // Packed while the workers start; each task carries it (shared memory: nothing is copied).
    this.#ranks = packRankTable(kDefaultEncoding); // a job's compactor counts in the default encoding (its config names no counter)
    // A worker that dies outside a task (while starting, or idle) stops the batch: Piscina may not
    // replace it (tasks then wait forever), and a worker that cannot start will not start on retry.
    this.#pool.on("error", (err: unknown) => {
      if (this.#failure) return;
      this.#failure = new CtxfoldError(
        "E_WORKER_CRASH",
        `a worker died outside a chunk: ${err instanceof Error ? err.message : String(err)}${this.#oomHint(err)}`,
      );
      void this.#pool.destroy().catch(() => undefined); // rejects the chunks in flight
    });
  }

  async run(bytes: Uint8Array, firstLine: number, chunk: number): Promise<ChunkResult> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 2; attempt++) {
      // A pool that lost a worker outside a chunk is destroyed, and a task given to it then never settles.
      if (this.#failure) throw this.#failure;
      const copy = bytes.slice();
      const task: WorkerTask = { bytes: copy, firstLine, options: this.#job, chunk, attempt, ranks: this.#ranks };
      let reply: WorkerReply;
      try {
        reply = (await this.#pool.run(task, { transferList: [copy.buffer as ArrayBuffer] })) as WorkerReply;
      } catch (err) {
        // Only a worker's death rejects a task (the worker returns its errors).
        if (this.#failure) throw this.#failure;
        lastError = err;
        if (attempt === 0) this.retried++;
        continue;
      }
      if (!(reply instanceof Uint8Array)) throw CtxfoldError.fromWire(reply);
      const { out, meta } = unpack<Omit<ChunkResult, "out">>(reply);
      return { out, ...meta };
    }
    this.crashed++;
    return passThrough(
      bytes,
      firstLine,
      `worker died compacting this chunk twice: ${lastError instanceof Error ? lastError.message : String(lastError)}${this.#oomHint(lastError)}`,
    );
  }

  async close(): Promise<void> {
    if (!this.#failure) await this.#pool.destroy(); // after a failure, already being destroyed
  }

  #oomHint(err: unknown): string {
    return (err as { code?: unknown } | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY" ? ` (raise --max-worker-heap-mb, now ${this.#heapMb})` : "";
  }
}

/** The worker's entry (worker-entry.cts): dist's beside this file, or dist's when running from sources. */
export function workerFile(): string {
  const here = new URL("./worker-entry.cjs", import.meta.url);
  if (existsSync(fileURLToPath(here))) return here.href;
  const built = new URL("../../dist/src/pool/worker-entry.cjs", import.meta.url);
  if (existsSync(fileURLToPath(built))) return built.href;
  throw new CtxfoldError("E_BAD_INPUT", `the pool's worker script is not built (looked for ${fileURLToPath(here)}); run \`npm run build\``);
}

/** A chunk written through unchanged, with an error record per run (after a worker died twice). */
export function passThrough(bytes: Uint8Array, firstLine: number, reason: string): ChunkResult {
  const stats = emptyStats();
  const errors: ErrorRecord[] = [];
  let lines = 0;
  for (const { raw, index } of linesOf(bytes)) {
    lines++;
    if (isBlankLine(raw)) continue;
    stats.runs++;
    stats.errors++;
    errors.push({ line: firstLine + index, code: "E_WORKER_CRASH", reason });
  }
  const out = bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? Buffer.concat([bytes, Buffer.from("\n")]) : bytes;
  stats.bytesIn = bytes.length;
  stats.bytesOut = out.length;
  return { out, errors, stats, lines };
}
