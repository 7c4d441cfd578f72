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
 * This file drives the batch; the input's chunks (and lines over the line limit) are chunks.ts's,
 * their order in-order.ts's, where they are compacted (in-process or in workers, with the
 * retries) worker-pool.ts's, the outputs opened and written with what they hold kept for the
 * checkpoint batch-writer.ts's, the options and summary batch-options.ts's, the checkpoint and
 * resume checkpoint.ts's, and the output files output.ts's.
 */
import { existsSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { CtxfoldError } from "../errors.js";
import { kDefaultWorkerHeapMb, type BatchOptions, type BatchSummary } from "./batch-options.js";
import { BatchWriter, openBatch, type BatchFiles, type BatchPlan, type OpenedBatch } from "./batch-writer.js";
import { checkpointToResume, inputFileOf, type Checkpoint } from "./checkpoint.js";
import { chunksOf, counting, kDefaultChunkBytes } from "./chunks.js";
import { inOrder } from "./in-order.js";
import { kDefaultMaxLineBytes, runBytesOf } from "./input.js";
import { emptyStats, type JobOptions } from "./job.js";
import { refuseToOverwriteInput, refuseUnusableOffloadDir } from "./output.js";
import { inProcessRunner, PoolRunner, type ChunkRunner } from "./worker-pool.js";

export { kDefaultWorkerHeapMb, type BatchOptions, type BatchProgress, type BatchSummary, type BatchTestHooks } from "./batch-options.js";

const kDefaultInProcessBelow = 1 << 20;

/** The run's stop requests (BatchOptions.onInterrupt): the first stops reading, the second drops the chunks in flight. */
interface StopRequests {
  stopping: () => boolean;
  /** Aborted at the second request. */
  drop: AbortSignal;
  /** Removes the interrupt handler. */
  remove: () => void;
}

/** Runs the batch; resolves with its summary (interrupted or not), rejects on fatal errors. */
export async function runBatch(options: BatchOptions): Promise<BatchSummary> {
  const started = performance.now();
  const plan = await planBatch(options);
  // The runner first: a queue that cannot be reached stops the batch before any file is touched.
  const runner = await startRunner(options, plan);
  const opened = await openOrClose(options, plan, runner);
  const summary = startSummary(plan, runner.workers);
  const stop = listenForStop(options.onInterrupt);
  const writer = new BatchWriter(options, plan, opened, summary, started, stop.stopping);
  const failure = await compactAll(options, plan, runner, opened, writer, stop);
  return endBatch(summary, plan, runner, failure, stop.stopping(), options.strict, started);
}

/**
 * Reads what the batch is from its options, refusing what cannot work before anything is
 * opened: an output, errors file or checkpoint that is the input, a resume from a checkpoint that
 * is not of this input as it is now and these options, an offload dir that cannot be one.
 */
async function planBatch(options: BatchOptions): Promise<BatchPlan> {
  const job = jobOf(options);
  const { file: _file, ...jobKey } = job; // eslint-disable-line @typescript-eslint/no-unused-vars
  const files: BatchFiles | undefined =
    options.output === "-" ? undefined : { checkpoint: `${options.output}.checkpoint.json`, errors: `${options.output}.errors.jsonl` };
  if (files)
    refuseToOverwriteInput(options.input, options.stdin, [
      [options.output, "the output"],
      [files.errors, "the errors file"],
      [files.checkpoint, "the checkpoint"],
    ]);
  const inputFile = inputFileOf(options.input === "-" ? undefined : statSync(options.input));
  // Resume: the checkpoint must be this run's, over the same input; output and errors are cut
  // back to what it covers once its lines done are read and found the same (openBatch).
  let resumed: Checkpoint | undefined;
  if (options.resume) {
    if (!files) throw new CtxfoldError("E_BAD_INPUT", "--resume needs -o FILE (a checkpoint sits beside the output file)");
    resumed = await checkpointToResume(files.checkpoint, options.input, jobKey, inputFile);
  }
  if (options.offloadDir) refuseUnusableOffloadDir(options.offloadDir);
  return { job, jobKey, files, inputFile, resumed, maxLineBytes: options.maxLineBytes ?? kDefaultMaxLineBytes };
}

/** What each chunk is compacted with: the batch's compaction options and the input's name for error records. */
function jobOf(options: BatchOptions): JobOptions {
  return {
    budget: options.budget,
    format: options.format,
    mode: options.mode,
    file: options.input === "-" ? "stdin" : options.input,
    ...(options.preset ? { preset: options.preset } : {}),
    ...(options.config ? { config: options.config } : {}),
    ...(options.offloadDir ? { offloadDir: options.offloadDir } : {}),
    ...(options.redactOffload ? { redactOffload: true } : {}),
  };
}

/**
 * Where the chunks are compacted: the caller's runner (a distributed batch's queue), this thread
 * (one worker, or an input file holding too few bytes of runs to share out: its size, or a
 * .gz's uncompressed size), or a pool of worker threads.
 */
async function startRunner(options: BatchOptions, plan: BatchPlan): Promise<ChunkRunner> {
  if (options.runner) return await options.runner(plan.job, plan.resumed !== undefined);
  const size = plan.inputFile.size;
  const runBytes = size === undefined ? undefined : runBytesOf(options.input, size);
  const inProcess = options.workers <= 1 || (runBytes !== undefined && runBytes < (options.inProcessBelow ?? kDefaultInProcessBelow));
  if (inProcess) return inProcessRunner(plan.job);
  const crash = options.testHooks?.crash;
  return new PoolRunner(plan.job, { workers: options.workers, heapMb: options.workerHeapMb ?? kDefaultWorkerHeapMb, ...(crash ? { crash } : {}) });
}

/** Opens the batch's input and outputs (openBatch); when they cannot be, closes the runner before failing. */
async function openOrClose(options: BatchOptions, plan: BatchPlan, runner: ChunkRunner): Promise<OpenedBatch> {
  try {
    return await openBatch(options, plan.job.file, plan.files, plan.resumed);
  } catch (err) {
    await runner.close();
    throw err;
  }
}

/** The summary as the run begins: a resume's counts so far, or none. */
function startSummary(plan: BatchPlan, workers: number): BatchSummary {
  const { resumed, files } = plan;
  return {
    ...(resumed ? structuredClone(resumed.stats) : emptyStats()),
    lines: resumed?.lines ?? 0,
    chunks: 0,
    seconds: 0,
    workers,
    interrupted: false,
    resumedAfterLine: resumed?.lines ?? 0,
    retried: 0,
    crashed: 0,
    peakRssMB: 0,
    ...(files ? { errorsFile: files.errors, checkpoint: files.checkpoint } : {}),
  };
}

/** Installs the interrupt handler: the first request stops the run, a second drops the chunks in flight. */
function listenForStop(onInterrupt: BatchOptions["onInterrupt"]): StopRequests {
  let stopping = false;
  const dropping = new AbortController();
  const remove = onInterrupt?.(() => {
    if (stopping) dropping.abort();
    stopping = true;
  });
  return { stopping: () => stopping, drop: dropping.signal, remove: () => remove?.() };
}

/**
 * Cuts the input into chunks, compacts them through the runner and writes their results in
 * input order until the input ends, a stop or a failure; then leaves a checkpoint of all a run
 * that stopped or failed wrote, and closes the input, the runner and the outputs. Resolves with
 * the failure, if any.
 */
async function compactAll(
  options: BatchOptions,
  plan: BatchPlan,
  runner: ChunkRunner,
  opened: OpenedBatch,
  writer: BatchWriter,
  stop: StopRequests,
): Promise<unknown> {
  let failure: unknown;
  try {
    const input = counting(opened.input, (n) => writer.pulled(n));
    const chunks = chunksOf(input, options.chunkBytes ?? kDefaultChunkBytes, (plan.resumed?.lines ?? 0) + 1, {
      maxLineBytes: plan.maxLineBytes,
      stopped: stop.stopping,
    });
    await inOrder(
      chunks,
      runner,
      (bytes, r) => writer.writeResult(bytes, r),
      stop.stopping,
      stop.drop,
      (long, line) => writer.writeLongLine(long, line),
    );
  } catch (err) {
    failure = err;
  } finally {
    // A run that stops or fails leaves a checkpoint of all it wrote (one that finishes removes it).
    try {
      if (stop.stopping() || failure) writer.saveCheckpoint();
    } catch (err) {
      failure ??= err;
    }
    stop.remove();
    opened.raw.destroy();
    await runner.close();
    await writer.close();
  }
  return failure;
}

/**
 * Completes the summary of a run that ended: the runner's counts, and then the failure
 * rethrown (under --strict, with no checkpoint left), or the checkpoint of a run that finished
 * removed and its time and peak memory filled in.
 */
async function endBatch(
  summary: BatchSummary,
  plan: BatchPlan,
  runner: ChunkRunner,
  failure: unknown,
  stopping: boolean,
  strict: boolean | undefined,
  started: number,
): Promise<BatchSummary> {
  const { files } = plan;
  summary.workers = runner.workers; // a queue's: the worker processes that returned shards
  summary.retried = runner.retried;
  summary.crashed = runner.crashed;
  if (failure) {
    if (files && existsSync(files.checkpoint) && strict) await rm(files.checkpoint);
    throw failure;
  }
  summary.interrupted = stopping;
  if (!stopping && files && existsSync(files.checkpoint)) await rm(files.checkpoint);
  summary.seconds = (performance.now() - started) / 1000;
  summary.peakRssMB = Math.round(process.resourceUsage().maxRSS / 1024);
  return summary;
}
