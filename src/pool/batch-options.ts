/**
 * What a batch is given and what it gives back: the options of runBatch (its files, workers,
 * chunking, resume, limits and hooks), its progress reports and its summary. Their own module,
 * so the engine and the writer of its outputs both speak them without importing each other.
 */
import type { Readable, Writable } from "node:stream";
import type { ChunkStats, ErrorRecord, JobOptions } from "./job.js";
import type { CrashHook } from "./worker.js";
import type { ChunkRunner } from "./worker-pool.js";

export interface BatchOptions extends Omit<JobOptions, "file"> {
  /** A file (.gz is gunzipped; gzip data is also recognised by its magic bytes) or "-" for `stdin`. */
  input: string;
  /** A file, or "-" for `stdout`. */
  output: string;
  /** Worker threads; 1 compacts in-process. */
  workers: number;
  /**
   * Continue from OUT.checkpoint.json (refused when it is not of this input, as it was then, and these options).
   * @default false
   */
  resume?: boolean;
  /**
   * Stop at the first line that cannot be compacted (E_BAD_INPUT naming file:line).
   * @default false: such a line is written through unchanged with an error record, and the run goes on
   */
  strict?: boolean;
  /** What input "-" reads. @default process.stdin */
  stdin?: Readable;
  /** Where output "-" writes. @default process.stdout */
  stdout?: Writable;
  /**
   * Called when the run is to stop (SIGINT); returns the handler's removal. The first `stop()`
   * finishes the chunks in flight; a second drops them (a resume redoes them; a queue's shards stay
   * queued, and a resume re-attaches to them) and ends the run at once.
   * @default none
   */
  onInterrupt?: (stop: () => void) => () => void;
  /** Called after every chunk written. @default none */
  onProgress?: (p: BatchProgress) => void;
  /** Error records of a run written to stdout go here, one line each. @default ignored */
  onError?: (record: ErrorRecord) => void;
  /** A chunk's least size, bytes (whole lines, so a longer line makes a longer chunk). @default 256 KiB */
  chunkBytes?: number;
  /**
   * A line longer than this, bytes, is never held whole: it is written through as it is read,
   * with an E_TOO_LARGE record (under `strict`, the batch stops there instead).
   * @default kDefaultMaxLineBytes (64 MiB)
   */
  maxLineBytes?: number;
  /** Input files holding fewer bytes of runs than this (a .gz: uncompressed) run in-process whatever `workers` says. @default 1 MiB */
  inProcessBelow?: number;
  /**
   * Each worker's V8 old-generation limit, MB (its young generation gets kWorkerYoungHeapMb); 0
   * leaves V8's defaults. @default 128: a worker's live heap is ~50 MB on the dev corpus, and
   * without a limit V8 lets each grow to ~150 MB before collecting, which put 2 workers at
   * 400–750 MB of RSS; with it, ~300 MB for 15–30% more CPU in the collector. A run too big for the limit
   * kills its worker: its chunk is retried, then passed through with E_WORKER_CRASH.
   */
  workerHeapMb?: number;
  /**
   * Where chunks are compacted instead of this process's threads (a distributed batch's queue,
   * given `resume`: whether this run continues an earlier one); `workers` and `workerHeapMb` are
   * then not used. @default in-process or a pool of `workers` threads
   */
  runner?: (job: JobOptions, resume: boolean) => Promise<ChunkRunner>;
  /** Faults and pacing injected by tests; the ctxfold command never sets them. @default none */
  testHooks?: BatchTestHooks;
}

/** What tests inject into a batch to reach the paths a healthy, fast run never takes. */
export interface BatchTestHooks {
  /** Milliseconds to wait after writing each chunk, so an interrupt lands mid-run. @default 0 */
  chunkDelayMs?: number;
  /** A worker to exit mid-chunk (the pool path only). @default none */
  crash?: CrashHook;
}

export const kDefaultWorkerHeapMb = 128;

export interface BatchProgress {
  /** Runs written so far (a resume's earlier ones included). */
  runs: number;
  /**
   * The share of the input written, when its size is known: the input bytes of the lines written
   * against the input's size (a .gz's decompressed size estimated from how much what was read so
   * far expanded). Not the share read: reading runs ahead of compaction by the chunks in flight.
   */
  doneFraction?: number;
  elapsedMs: number;
}

export interface BatchSummary extends ChunkStats {
  lines: number;
  chunks: number;
  seconds: number;
  /** Worker threads used (0: in-process), or a queue's worker processes. */
  workers: number;
  interrupted: boolean;
  /** Lines the run skipped because a checkpoint said they were done. */
  resumedAfterLine: number;
  errorsFile?: string;
  checkpoint?: string;
  /** Chunks retried after a worker died, and chunks written through after the retry died too. */
  retried: number;
  crashed: number;
  /** The process's peak resident set (main thread and workers), MB. */
  peakRssMB: number;
}
