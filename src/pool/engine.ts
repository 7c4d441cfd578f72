/**
 * The batch engine behind `ctxfold compact`: streams JSONL, cuts it into chunks of whole lines
 * (≥ chunkBytes), compacts them in a Piscina pool (or in-process for one worker and small
 * inputs), and writes the results in input order. Memory stays bounded: at most
 * `2 × workers` chunks are in flight, and reading waits for a free slot.
 *
 * Faults: a bad line, or a run the compactor fails on, is written through with an error record
 * (or, under `strict`, stops the run); a chunk whose worker dies is retried once in a fresh
 * worker, then written through with an error record per run; an offload store that cannot be
 * written stops the batch on either path (a worker returns the error, rebuilt here, so only a
 * death counts as a crash); an interrupt finishes the chunks in flight and leaves a checkpoint
 * (`OUT.checkpoint.json`) from which `resume` continues with no run lost or written twice.
 *
 * This file drives the batch and writes what it is handed; the input's chunks (and lines over the
 * line limit) are chunks.ts's, their order in-order.ts's, where they are compacted (in-process or
 * in workers, with the retries) worker-pool.ts's, the checkpoint and resume checkpoint.ts's, and
 * the output files output.ts's.
 */
import { createHash, type Hash } from "node:crypto";
import { createReadStream, existsSync, statSync } from "node:fs";
import { rm, truncate } from "node:fs/promises";
import type { Readable, Writable } from "node:stream";
import { CtxfoldError, type CtxfoldErrorCode } from "../errors.js";
import { checkpointToResume, inputChanged, inputFileOf, kCheckpointVersion, skipLines, writeCheckpoint, writtenAsRecorded, type Checkpoint } from "./checkpoint.js";
import { chunksOf, counting, kDefaultChunkBytes, type LongLine } from "./chunks.js";
import { gunzipIfGzip, kDefaultMaxLineBytes } from "./input.js";
import { addStats, emptyStats, type ChunkResult, type ChunkStats, type ErrorRecord, type JobOptions } from "./job.js";
import { fileSink, refuseToOverwriteInput, refuseUnusableOffloadDir, streamSink, writingTo, type Sink } from "./output.js";
import type { CrashHook } from "./worker.js";
import { inProcessRunner, PoolRunner, type ChunkRunner } from "./worker-pool.js";
import { inOrder } from "./in-order.js";

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
  /** Inputs smaller than this (files only) run in-process whatever `workers` says. @default 1 MiB */
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
const kNewline = new Uint8Array([0x0a]);
/**
 * How often the checkpoint is rewritten, at most (ms): an atomic rewrite per chunk cost ~10% of
 * a batch of small runs on a slow filesystem; a resume redoes at most this much work.
 */
const kCheckpointEveryMs = 1000;

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

const kDefaultInProcessBelow = 1 << 20;

/** The files beside the output (none when it is stdout). */
interface BatchFiles {
  checkpoint: string;
  errors: string;
}

/** The batch's input and outputs, opened; a resume's lines done already read past. */
interface OpenedBatch {
  /** The input as read (destroyed when the batch ends). */
  raw: Readable;
  /** The input's lines not done yet, decompressed. */
  input: AsyncIterable<Buffer>;
  /** For gzip data, the compressed bytes its decompressor has taken (see gunzipIfGzip). */
  gzip: { bytesIn?: () => number };
  /** SHA-256 of the input's lines done (those skipped on resume, then every chunk written). */
  done: Hash;
  /** SHA-256 of the output's and the errors file's bytes written (a resume's checked and kept). */
  outHash: Hash;
  errHash: Hash;
  out: Sink;
  /** The errors file, when a resume continues one (otherwise opened at the first error record). */
  errSink: Sink | undefined;
}

/** Runs the batch; resolves with its summary (interrupted or not), rejects on fatal errors. */
export async function runBatch(options: BatchOptions): Promise<BatchSummary> {
  const started = performance.now();
  const job: JobOptions = {
    budget: options.budget, format: options.format, mode: options.mode, file: options.input === "-" ? "stdin" : options.input,
    ...(options.preset ? { preset: options.preset } : {}), ...(options.offloadDir ? { offloadDir: options.offloadDir } : {}),
    ...(options.redactOffload ? { redactOffload: true } : {}),
  };
  const { file: _file, ...jobKey } = job; // eslint-disable-line @typescript-eslint/no-unused-vars
  const files: BatchFiles | undefined = options.output === "-" ? undefined : { checkpoint: `${options.output}.checkpoint.json`, errors: `${options.output}.errors.jsonl` };
  if (files) refuseToOverwriteInput(options.input, options.stdin, [[options.output, "the output"], [files.errors, "the errors file"], [files.checkpoint, "the checkpoint"]]);

  const inputFile = inputFileOf(options.input === "-" ? undefined : statSync(options.input));
  const totalBytes = inputFile.size;
  // Resume: the checkpoint must be this run's, over the same input; output and errors are cut
  // back to what it covers once its lines done are read and found the same.
  let resumed: Checkpoint | undefined;
  if (options.resume) {
    if (!files) throw new CtxfoldError("E_BAD_INPUT", "--resume needs -o FILE (a checkpoint sits beside the output file)");
    resumed = await checkpointToResume(files.checkpoint, options.input, jobKey, inputFile);
  }
  if (options.offloadDir) refuseUnusableOffloadDir(options.offloadDir);
  // The runner first: a queue that cannot be reached stops the batch before any file is touched.
  const inProcess = options.workers <= 1 || (totalBytes !== undefined && totalBytes < (options.inProcessBelow ?? kDefaultInProcessBelow));
  const hooks = options.testHooks ?? {};
  const runner: ChunkRunner = options.runner ? await options.runner(job, resumed !== undefined) : inProcess ? inProcessRunner(job) : new PoolRunner(job, {
    workers: options.workers, heapMb: options.workerHeapMb ?? kDefaultWorkerHeapMb, ...(hooks.crash ? { crash: hooks.crash } : {}),
  });
  let opened: OpenedBatch;
  try {
    opened = await openBatch(options, job.file, files, resumed);
  } catch (err) {
    await runner.close();
    throw err;
  }
  const { raw, input, gzip, out, errHash } = opened;
  // The input's lines done and the output written, hashed (a line over the limit swaps in its copies once it is whole).
  let { done, outHash } = opened;
  let errSink = opened.errSink;
  const summary: BatchSummary = {
    ...(resumed ? structuredClone(resumed.stats) : emptyStats()), lines: resumed?.lines ?? 0, chunks: 0, seconds: 0, workers: runner.workers,
    interrupted: false, resumedAfterLine: resumed?.lines ?? 0, retried: 0, crashed: 0, peakRssMB: 0,
    ...(files ? { errorsFile: files.errors, checkpoint: files.checkpoint } : {}),
  };
  let stopping = false;
  const dropping = new AbortController();
  const removeInterrupt = options.onInterrupt?.(() => {
    if (stopping) dropping.abort();
    stopping = true;
  });

  // Output and errors-file bytes written so far, resumed ones included.
  let outBytes = resumed?.outBytes ?? 0;
  let errBytes = resumed?.errBytes ?? 0;
  // The checkpoint: after the first chunk, then at most every kCheckpointEveryMs, and when the run stops.
  let savedAt = -Infinity;
  // A run stopped before its first chunk was written still leaves a checkpoint to resume from.
  let unsaved = true;
  const saveCheckpoint = () => {
    if (!files || !unsaved) return;
    const stats = emptyStats();
    addStats(stats, summary);
    writeCheckpoint(files.checkpoint, {
      ctxfold: "checkpoint", version: kCheckpointVersion, input: options.input, inputFile: { ...inputFile, doneSha256: done.copy().digest("hex") },
      options: jobKey, lines: summary.lines, outBytes, errBytes, outSha256: outHash.copy().digest("hex"), errSha256: errHash.copy().digest("hex"), stats,
    });
    savedAt = performance.now();
    unsaved = false;
  };
  // Input bytes taken by the chunker (decompressed), a resume's lines done included: against the
  // compressed bytes they came from, how much a .gz expands, so the input's size decompressed.
  let pulledBytes = resumed?.stats.bytesIn ?? 0;
  const decompressedSize = (size: number) => size * (gzip.bytesIn ? pulledBytes / Math.max(1, gzip.bytesIn()) : 1);
  /** Writes a chunk's result; `bytes` are the chunk's input lines, now done. */
  const writeResult = async (bytes: Uint8Array, r: ChunkResult) => {
    if (options.strict && r.errors.length > 0) {
      const e = r.errors[0];
      throw strictStop(e.code as never, e.reason, `${e.line}${e.path ? `: ${e.path}` : ""}`);
    }
    await out.write(r.out);
    outBytes += r.out.length;
    outHash.update(r.out);
    done.update(bytes);
    await counted(r);
  };
  const strictStop = (code: CtxfoldErrorCode, reason: string, where: string) =>
    new CtxfoldError(code, `${reason} (--strict: stopped; ${summary.lines} lines before it were written)`, { path: `${job.file}:${where}` });
  const maxLineBytes = options.maxLineBytes ?? kDefaultMaxLineBytes;
  /**
   * Writes a line over the line limit through as it is read, never held whole, with its
   * E_TOO_LARGE record; false when a stop cut it short (the checkpoint ends before it, so a
   * resume cuts off what of it was written and writes it again).
   */
  const writeLongLine = async (long: LongLine, line: number): Promise<boolean> => {
    const limit = `over --max-line-mb ${maxLineBytes / 2 ** 20}: written through unparsed (raise --max-line-mb to compact it)`;
    if (options.strict) throw strictStop("E_TOO_LARGE", `a line ${limit}`, String(line));
    const lineDone = done.copy();
    const lineOut = outHash.copy();
    let length = 0;
    for await (const block of long.blocks) {
      if (stopping) return false;
      await out.write(block);
      lineDone.update(block);
      lineOut.update(block);
      length += block.length;
    }
    await out.write(kNewline);
    lineOut.update(kNewline);
    if (long.newline) lineDone.update(kNewline);
    [done, outHash] = [lineDone, lineOut];
    outBytes += length + 1;
    const stats = { ...emptyStats(), runs: 1, errors: 1, bytesIn: length + 1, bytesOut: length + 1 };
    await counted({ errors: [{ line, code: "E_TOO_LARGE", reason: `a line of ${(length / 2 ** 20).toFixed(1)} MB, ${limit}` }], stats, lines: 1 });
    return true;
  };
  /** Records a result written: its error records, its stats, the checkpoint when due, progress. */
  const counted = async (r: Omit<ChunkResult, "out">) => {
    if (r.errors.length > 0) {
      if (files) {
        errSink ??= await fileSink(files.errors, 0);
        const text = Buffer.from(r.errors.map((e) => JSON.stringify(e) + "\n").join(""), "utf8");
        await errSink.write(text);
        errHash.update(text);
        errBytes += text.length;
      } else for (const e of r.errors) options.onError?.(e);
    }
    addStats(summary, r.stats);
    summary.lines += r.lines;
    summary.chunks++;
    unsaved = true;
    if (performance.now() - savedAt >= kCheckpointEveryMs) saveCheckpoint();
    if ((hooks.chunkDelayMs ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, hooks.chunkDelayMs));
    options.onProgress?.({
      runs: summary.runs, elapsedMs: performance.now() - started,
      ...(totalBytes ? { doneFraction: Math.min(1, summary.bytesIn / decompressedSize(totalBytes)) } : {}),
    });
  };

  let failure: unknown;
  try {
    const chunks = chunksOf(counting(input, (n) => (pulledBytes += n)), options.chunkBytes ?? kDefaultChunkBytes, (resumed?.lines ?? 0) + 1, { maxLineBytes, stopped: () => stopping });
    await inOrder(chunks, runner, writeResult, () => stopping, dropping.signal, writeLongLine);
  } catch (err) {
    failure = err;
  } finally {
    // A run that stops or fails leaves a checkpoint of all it wrote (one that finishes removes it).
    try {
      if (stopping || failure) saveCheckpoint();
    } catch (err) {
      failure ??= err;
    }
    removeInterrupt?.();
    raw.destroy();
    await runner.close();
    await out.close();
    await errSink?.close();
  }
  summary.workers = runner.workers; // a queue's: the worker processes that returned shards
  summary.retried = runner.retried;
  summary.crashed = runner.crashed;
  if (failure) {
    if (files && existsSync(files.checkpoint) && options.strict) await rm(files.checkpoint);
    throw failure;
  }
  summary.interrupted = stopping;
  if (!stopping && files && existsSync(files.checkpoint)) await rm(files.checkpoint);
  summary.seconds = (performance.now() - started) / 1000;
  summary.peakRssMB = Math.round(process.resourceUsage().maxRSS / 1024);
  return summary;
}

/**
 * Opens the input (past a resume's lines done, which must hash as the checkpoint says) and the
 * outputs: the output cut back to what the checkpoint covers, or created; the errors file cut
 * back likewise, or removed with the checkpoint of an earlier run. A resume's outputs must begin
 * with the bytes the checkpoint says were written (writtenAsRecorded), checked before either is cut.
 */
async function openBatch(options: BatchOptions, name: string, files: BatchFiles | undefined, resumed: Checkpoint | undefined): Promise<OpenedBatch> {
  const raw: Readable = options.input === "-" ? options.stdin ?? process.stdin : createReadStream(options.input, { highWaterMark: 1 << 20 });
  const gzip: { bytesIn?: () => number } = {};
  const done = createHash("sha256");
  let input: AsyncIterable<Buffer> = gunzipIfGzip(raw, name, gzip);
  try {
    if (resumed) {
      input = await skipLines(input, resumed.lines, done);
      if (done.copy().digest("hex") !== resumed.inputFile.doneSha256) {
        throw inputChanged(options.input, files!.checkpoint, `its first ${resumed.lines} lines are not the ones compacted`);
      }
    } else if (files && existsSync(files.checkpoint)) {
      await rm(files.checkpoint);
    }
    const outHash = resumed ? await writtenAsRecorded(options.output, resumed.outBytes, resumed.outSha256, files!.checkpoint) : createHash("sha256");
    const errHash = resumed ? await writtenAsRecorded(files!.errors, resumed.errBytes, resumed.errSha256, files!.checkpoint) : createHash("sha256");
    const out = files ? await fileSink(options.output, resumed?.outBytes ?? 0) : streamSink(options.stdout ?? process.stdout, "stdout");
    let errSink: Sink | undefined;
    if (files) {
      if (resumed) {
        if (existsSync(files.errors)) await writingTo(files.errors, truncate(files.errors, resumed.errBytes));
        errSink = await fileSink(files.errors, resumed.errBytes);
      } else if (existsSync(files.errors)) {
        await rm(files.errors);
      }
    }
    return { raw, input, gzip, done, outHash, errHash, out, errSink };
  } catch (err) {
    raw.destroy();
    throw err;
  }
}
