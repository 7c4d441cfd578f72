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
import type { ChunkResult, JobOptions } from "../pool/job.js";
import { PoolRunner, type ChunkRunner } from "../pool/worker-pool.js";
import { kQueueName, type QueueAddress } from "./address.js";
import { reachQueue } from "./connection.js";
import { admitJob, type AdmittedJob, type WorkerRoots } from "./confine.js";
import { sealResult } from "./result.js";
import { compactShard, kWorkerName, packResult, shardId, type ShardJob, type ShardMeta } from "./shard.js";

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

/**
 * The worker's pools, a lane per set of options and batch: a pool's threads keep a compactor and
 * an offload store, whose index of the offload dir lasts one batch (a new producer may have
 * removed the dir since). A new batch's shards get a new pool; the old one closes once its shards
 * in hand are done.
 */
class Lanes {
  /** The current lane of each set of options (by its JSON). */
  private readonly current = new Map<string, Lane>();
  /** Every lane not closed yet, retired ones with shards in hand included. */
  private readonly open = new Set<Lane>();

  constructor(
    private readonly concurrency: number,
    private readonly heapMb: number,
  ) {}

  /**
   * Compacts a shard of `batch` on its options' lane (counted in hand meanwhile): its result, or
   * the error that stopped it, as the producer is to read it.
   */
  async compact(options: JobOptions, batch: string, bytes: Uint8Array, firstLine: number): Promise<ShardOutcome> {
    const lane = this.laneFor(options, batch);
    lane.active++;
    try {
      return { result: await compactShard(bytes, firstLine, lane.runner) };
    } catch (err) {
      return { fatal: asCtxfoldError(err).toWire() };
    } finally {
      lane.active--;
      this.retire(lane);
    }
  }

  /** Closes every lane's pool, whatever each close comes to. */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.open].map((lane) => lane.runner.close()));
  }

  /** The lane of `options` for `batch`: the current one, or a new one when that is another batch's (retired). */
  private laneFor(options: JobOptions, batch: string): Lane {
    const key = JSON.stringify(options);
    let lane = this.current.get(key);
    if (lane && lane.batch !== batch) {
      lane.retired = true;
      this.retire(lane);
      lane = undefined;
    }
    if (!lane) {
      lane = { batch, runner: new PoolRunner(options, { workers: this.concurrency, heapMb: this.heapMb }), active: 0, retired: false };
      this.current.set(key, lane);
      this.open.add(lane);
    }
    return lane;
  }

  /** Closes a retired lane once it has no shard in hand. */
  private retire(lane: Lane): void {
    if (!lane.retired || lane.active > 0) return;
    this.open.delete(lane);
    void lane.runner.close();
  }
}

/** A shard compacted: its result, or the error that stopped it (E_STORE_WRITE…). */
type ShardOutcome = { result: ChunkResult; fatal?: undefined } | { result?: undefined; fatal: NonNullable<ShardMeta["fatal"]> };

/** A job admitted (confine.ts) with its shard's bytes, read from the storage and checked against the shard's id. */
interface AdmittedShard extends AdmittedJob {
  bytes: Uint8Array;
}

/**
 * Admits a job and reads its shard: a job the producer could not have queued, or whose bytes
 * are not the ones its shard id names, is refused for good; a shard no longer in the storage
 * fails the job (its batch finished or was started afresh).
 */
function admitShard(job: Job<ShardJob>, roots: WorkerRoots): AdmittedShard {
  const admitted = refusing(() => admitJob(String(job.id), job.data, roots));
  const { storage, shard, firstLine, asQueued } = admitted;
  const bytes = storage.readShard(shard);
  // Its batch finished or was started afresh: a failure the producer (if any) has moved past.
  if (!bytes) throw new Error(`shard ${shard} is not in ${storage.url} (its batch finished or was started afresh)`);
  if (shardId(asQueued, firstLine, bytes) !== shard) {
    refusing(() => {
      throw new CtxfoldError("E_JOB_REFUSED", `job ${job.id}: shard: ${shard} is not the hash of its bytes, first line and options`);
    });
  }
  return { ...admitted, bytes };
}

/**
 * The queue's job handler: admits a job, compacts its shard on its lane, writes the sealed
 * result (or the error that stopped it) to the storage, and counts it in `summary`.
 */
function shardHandler(o: QueueWorkerOptions, lanes: Lanes, summary: QueueWorkerSummary): (job: Job<ShardJob>) => Promise<void> {
  return async (job) => {
    const started = performance.now();
    const { storage, shard, firstLine, options, batch, key, bytes } = admitShard(job, o.roots);
    if (o.dieAtLine === firstLine) process.exit(70);
    const { result, fatal } = await lanes.compact(options, batch, bytes, firstLine);
    const ms = performance.now() - started;
    storage.putResult(
      shard,
      sealResult(shard, key, packResult(result, { worker: kWorkerName, attempt: job.attemptsStarted, ms, ...(fatal ? { fatal } : {}) })),
    );
    summary.shards++;
    summary.runs += result?.stats.runs ?? 0;
    if (o.verbose) {
      o.log(
        result
          ? `shard ${shard.slice(0, 8)}: lines ${firstLine}–${firstLine + result.lines - 1}, ${result.stats.runs} runs (${result.stats.compacted} compacted, ${result.stats.errors} errors) in ${(ms / 1000).toFixed(1)} s`
          : `shard ${shard.slice(0, 8)}: stopped by ${fatal!.code}: ${fatal!.message}`,
      );
    }
  };
}

/** Logs the queue's troubles: a connection error at most every 30 s (ioredis retries), each job refused or failed. */
function logQueueEvents(worker: Worker<ShardJob>, o: QueueWorkerOptions): void {
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
}

/** The stop signals as they come: the first closes the worker once its shards in hand are done, a second abandons them. */
function closeOnStop(worker: Worker<ShardJob>, o: QueueWorkerOptions): { abandoning: () => boolean; remove: () => void } {
  let stops = 0;
  const remove = o.onStop(() => {
    stops++;
    if (stops === 1) o.log("stopping: finishing the shards in hand (again to abandon them to other workers)");
    void worker.close(stops > 1);
  });
  return { abandoning: () => stops > 1, remove };
}

/** Runs until stopped; resolves with what it did. E_QUEUE when Redis cannot be reached at the start. */
export async function runQueueWorker(o: QueueWorkerOptions): Promise<QueueWorkerSummary> {
  await reachQueue(o.address);
  const lanes = new Lanes(o.concurrency, o.heapMb);
  const summary: QueueWorkerSummary = { shards: 0, runs: 0 };
  const worker = new Worker<ShardJob>(kQueueName, shardHandler(o, lanes, summary), {
    connection: o.address.options,
    concurrency: o.concurrency,
    lockDuration: o.stallMs,
    stalledInterval: o.stallMs,
    maxStalledCount: 1,
    autorun: false,
  });
  logQueueEvents(worker, o);
  const stop = closeOnStop(worker, o);
  o.log(`taking shards from ${o.address.shown} (queue ${kQueueName}, concurrency ${o.concurrency}, ${kWorkerName})`);
  try {
    await worker.run();
  } finally {
    stop.remove();
    await worker.close(stop.abandoning());
    await lanes.closeAll();
  }
  o.log(`stopped after ${summary.shards} shards (${summary.runs} runs)`);
  return summary;
}
