/**
 * `ctxfold worker`: a long-running process that takes shard jobs from the queue and compacts
 * them with the local engine's chunk function in a pool of `concurrency` threads (never on the
 * main thread, whose event loop must stay free to renew the jobs' locks, however long a run takes),
 * reading each shard from and writing its sealed result to the shared storage the job names, and
 * the removed originals to the shared offload dir (each process appends its own packs: the pack
 * store's multi-writer design). A job is input: one not of the producer's grammar, naming a place
 * outside the worker's roots, or whose shard is not the one its id names, is refused (confine.ts).
 *
 * Stopping: the first SIGINT/SIGTERM finishes the shards in hand and exits; a second abandons
 * them (their locks lapse, and BullMQ's stalled-job check hands them to another worker). A worker
 * that dies is the same as the second: its shard is retried elsewhere once. Losing Redis is
 * logged and waited out (ioredis reconnects): the producer decides how long the batch waits.
 */
import { UnrecoverableError, Worker, type Job } from "bullmq";
import { asCtxfoldError, CtxfoldError } from "../errors.js";
import type { JobOptions } from "../pool/job.js";
import { PoolRunner, type ChunkRunner } from "../pool/worker-pool.js";
import { kQueueName, type QueueAddress } from "./address.js";
import { reachQueue } from "./connection.js";
import { admitJob, type WorkerRoots } from "./confine.js";
import { sealResult } from "./result.js";
import { compactShard, kWorkerName, packResult, shardId, type ShardJob } from "./shard.js";

export interface QueueWorkerOptions {
  address: QueueAddress;
  /** Shards compacted at once (the pool's threads). */
  concurrency: number;
  /** Where jobs may make this worker read and write (workerRoots: --work-dir, --offload-dir). */
  roots: WorkerRoots;
  /** How long a silent worker keeps its shard before another takes it, ms (BullMQ's lock and stalled check). */
  stallMs: number;
  /** Each pool thread's V8 old-generation limit, MB (0: V8's default). */
  heapMb: number;
  log: (line: string) => void;
  /** Per-shard lines besides the start, stop and connection ones. */
  verbose: boolean;
  /** Installs the stop signal's handler (called once per signal); returns its removal. */
  onStop: (handler: () => void) => () => void;
  /** Tests: the process exits mid-shard on a shard starting at this input line, as a killed worker would. @default none */
  dieAtLine?: number;
}

/** A pool of threads compacting one batch's shards of one set of options. */
interface Lane {
  batch: string;
  runner: ChunkRunner;
  /** Shards in hand. */
  active: number;
  /** A newer batch took its place: closed once `active` is 0. */
  retired: boolean;
}

export interface QueueWorkerSummary {
  shards: number;
  runs: number;
}

/**
 * `f()`, its E_JOB_REFUSED thrown as BullMQ's UnrecoverableError carrying the code: the job fails
 * at once (no other worker is asked), and the producer, reading the code, stops its batch.
 */
function refusing<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    const e = asCtxfoldError(err);
    throw e.code === "E_JOB_REFUSED" ? new UnrecoverableError(`${e.code}: ${e.message}`) : e;
  }
}

/** Runs until stopped; resolves with what it did. E_QUEUE when Redis cannot be reached at the start. */
export async function runQueueWorker(o: QueueWorkerOptions): Promise<QueueWorkerSummary> {
  await reachQueue(o.address);
  // A pool per batch and options: its threads keep a compactor and an offload store, whose index
  // of the offload dir lasts one batch (a new producer may have removed the dir since). A new
  // batch's shards get a new pool; the old one closes once its shards in hand are done.
  const lanes = new Map<string, Lane>();
  const all = new Set<Lane>();
  const laneFor = (options: JobOptions, batch: string): Lane => {
    const key = JSON.stringify(options);
    let lane = lanes.get(key);
    if (lane && lane.batch !== batch) {
      lane.retired = true;
      retire(lane);
      lane = undefined;
    }
    if (!lane) {
      lane = { batch, runner: new PoolRunner(options, { workers: o.concurrency, heapMb: o.heapMb }), active: 0, retired: false };
      lanes.set(key, lane);
      all.add(lane);
    }
    return lane;
  };
  const retire = (lane: Lane) => {
    if (!lane.retired || lane.active > 0) return;
    all.delete(lane);
    void lane.runner.close();
  };
  const summary: QueueWorkerSummary = { shards: 0, runs: 0 };

  const compactJob = async (job: Job<ShardJob>): Promise<void> => {
    const started = performance.now();
    const { storage, shard, firstLine, options, asQueued, batch, key } = refusing(() => admitJob(String(job.id), job.data, o.roots));
    const bytes = storage.readShard(shard);
    // Its batch finished or was started afresh: a failure the producer (if any) has moved past.
    if (!bytes) throw new Error(`shard ${shard} is not in ${storage.url} (its batch finished or was started afresh)`);
    if (shardId(asQueued, firstLine, bytes) !== shard) {
      refusing(() => {
        throw new CtxfoldError("E_JOB_REFUSED", `job ${job.id}: shard: ${shard} is not the hash of its bytes, first line and options`);
      });
    }
    if (o.dieAtLine === firstLine) process.exit(70);
    let result;
    let fatal;
    const lane = laneFor(options, batch);
    lane.active++;
    try {
      result = await compactShard(bytes, firstLine, lane.runner);
    } catch (err) {
      fatal = asCtxfoldError(err).toWire();
    } finally {
      lane.active--;
      retire(lane);
    }
    const ms = performance.now() - started;
    storage.putResult(shard, sealResult(shard, key, packResult(result, { worker: kWorkerName, attempt: job.attemptsStarted, ms, ...(fatal ? { fatal } : {}) })));
    summary.shards++;
    summary.runs += result?.stats.runs ?? 0;
    if (o.verbose) {
      o.log(result
        ? `shard ${shard.slice(0, 8)}: lines ${firstLine}–${firstLine + result.lines - 1}, ${result.stats.runs} runs (${result.stats.compacted} compacted, ${result.stats.errors} errors) in ${(ms / 1000).toFixed(1)} s`
        : `shard ${shard.slice(0, 8)}: stopped by ${fatal!.code}: ${fatal!.message}`);
    }
  };

  const worker = new Worker<ShardJob>(kQueueName, compactJob, {
    connection: o.address.options, concurrency: o.concurrency, lockDuration: o.stallMs, stalledInterval: o.stallMs, maxStalledCount: 1, autorun: false,
  });
  let lastError = -Infinity;
  worker.on("error", (err) => {
    if (performance.now() - lastError < 30_000) return;
    lastError = performance.now();
    o.log(`queue at ${o.address.shown}: ${err.message} (retrying)`);
  });
  worker.on("failed", (job, err) => {
    if (err instanceof UnrecoverableError) o.log(`refused ${err.message.replace(/^E_JOB_REFUSED: /, "")}`);
    else if (job) o.log(`job ${job.id} failed (try ${job.attemptsStarted}): ${err.message}`);
  });

  let stops = 0;
  const removeStop = o.onStop(() => {
    stops++;
    if (stops === 1) o.log("stopping: finishing the shards in hand (again to abandon them to other workers)");
    void worker.close(stops > 1);
  });
  o.log(`taking shards from ${o.address.shown} (queue ${kQueueName}, concurrency ${o.concurrency}, ${kWorkerName})`);
  try {
    await worker.run();
  } finally {
    removeStop();
    await worker.close(stops > 1);
    await Promise.allSettled([...all].map((lane) => lane.runner.close()));
  }
  o.log(`stopped after ${summary.shards} shards (${summary.runs} runs)`);
  return summary;
}
