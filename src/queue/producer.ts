/**
 * The producer's side of a distributed batch: a ChunkRunner whose chunks are shards compacted by
 * `ctxfold worker` processes anywhere, so the local engine (runBatch) does the rest unchanged:
 * reading and cutting the input, the order of the output, progress, error records, the summary,
 * the checkpoint and `--resume`.
 *
 * A shard's bytes go to the shared storage and a BullMQ job names them; the worker writes the
 * result beside them and completes the job; the producer reads it, and removes both. A shard whose
 * result is there already (a resumed producer's, finished while no producer waited) is not
 * queued again; a job queued by the producer before (same id) is waited on, not added twice. A
 * shard whose job failed twice (two worker deaths: BullMQ's stalled-job check hands a dead
 * worker's job to another once, then fails it) is written through with an E_WORKER_CRASH record
 * per run, as the local engine does with a chunk whose worker died twice; an error a worker
 * returns (E_STORE_WRITE) stops the batch, as it does locally, and so does a worker's refusal of
 * a job (E_JOB_REFUSED: the work dir is outside its --work-dir).
 *
 * A result is used only once it is opened (result.ts): of this shard, its bytes whole, sealed with
 * the batch's result key. The key lives in Redis beside the queue, one per work dir, so a resumed
 * producer and a producer started afresh over jobs still queued open what their workers sealed;
 * when it is new (Redis lost it), the results already in the work dir cannot be checked and are
 * removed, to be compacted again.
 */
import { randomUUID } from "node:crypto";
import { Queue, QueueEvents } from "bullmq";
import type { Redis } from "ioredis";
import { CtxfoldError } from "../errors.js";
import type { ChunkResult, JobOptions } from "../pool/job.js";
import { passThrough, type ChunkRunner } from "../pool/worker-pool.js";
import { kQueueName, type QueueAddress } from "./address.js";
import { reachQueue, watchConnections } from "./connection.js";
import { newResultKey, openResult } from "./result.js";
import { shardId, type ShardJob } from "./shard.js";
import type { ShardStorage } from "./storage.js";

export interface QueueRunnerOptions {
  address: QueueAddress;
  storage: ShardStorage;
  /** Shards in flight at most (each held in memory until written). */
  capacity: number;
  /** A fresh start: the storage's shards and results of an earlier producer are removed. */
  fresh: boolean;
  /** How long Redis may stay unreachable before the batch stops with E_QUEUE, ms. */
  graceMs: number;
}

/** The Redis hash of result keys, by work dir URL. */
const kResultKeys = "ctxfold:result-keys";

export async function queueRunner(job: JobOptions, options: QueueRunnerOptions): Promise<QueueRunner> {
  options.storage.probe();
  await reachQueue(options.address);
  if (options.fresh) options.storage.clear();
  const runner = new QueueRunner(job, options);
  try {
    if (await runner.ready()) options.storage.clear();
  } catch (err) {
    await runner.close();
    throw err;
  }
  return runner;
}

export class QueueRunner implements ChunkRunner {
  readonly capacity: number;
  retried = 0;
  crashed = 0;
  /** Shards a worker returned. */
  shards = 0;
  /**
   * Milliseconds of the queued shards' round trips not spent by a worker on them: queueing,
   * storage, notification, and waiting for a free worker (none when workers outnumber the shards
   * in flight: then it is the queue's own cost per shard).
   */
  readonly handoff = { shards: 0, ms: 0 };
  readonly #job: JobOptions;
  readonly #storage: ShardStorage;
  readonly #queue: Queue<ShardJob>;
  readonly #events: QueueEvents;
  readonly #options: QueueRunnerOptions;
  readonly #seen = new Set<string>();
  readonly #batch = randomUUID();
  #key = "";
  #lost: CtxfoldError | undefined;
  readonly #onLost = new Set<(err: CtxfoldError) => void>();
  /** The shards waited for, by job id: each settles with "" (done) or its failure's reason. */
  readonly #waits = new Map<string, (reason: string) => void>();
  #unwatch: () => void = () => undefined;

  constructor(job: JobOptions, options: QueueRunnerOptions) {
    this.#job = job;
    this.#options = options;
    this.#storage = options.storage;
    this.capacity = options.capacity;
    const connection = options.address.options;
    this.#queue = new Queue<ShardJob>(kQueueName, { connection });
    this.#events = new QueueEvents(kQueueName, { connection });
    // Reported through the watch (a connection down for the grace period), not thrown here.
    this.#queue.on("error", () => undefined);
    this.#events.on("error", () => undefined);
    this.#events.on("completed", ({ jobId }) => this.#waits.get(jobId)?.(""));
    this.#events.on("failed", ({ jobId, failedReason }) => this.#waits.get(jobId)?.(failedReason || "failed"));
  }

  /** Worker processes that returned a shard so far. */
  get workers(): number {
    return this.#seen.size;
  }

  /** Connects, and takes the work dir's result key; whether the key is new. */
  async ready(): Promise<boolean> {
    await Promise.all([this.#queue.waitUntilReady(), this.#events.waitUntilReady()]);
    const clients = (await Promise.all([this.#queue.client, this.#events.client])) as unknown as Redis[];
    const created = await clients[0].hsetnx(kResultKeys, this.#storage.url, newResultKey());
    this.#key = (await clients[0].hget(kResultKeys, this.#storage.url)) ?? "";
    this.#unwatch = watchConnections(this.#options.address, clients, this.#options.graceMs, (err) => {
      this.#lost = err;
      for (const f of this.#onLost) f(err);
    });
    return created === 1;
  }

  async run(bytes: Uint8Array, firstLine: number): Promise<ChunkResult> {
    if (this.#lost) throw this.#lost;
    const id = shardId(this.#job, firstLine, bytes);
    let packed = this.#storage.readResult(id);
    let failure = "";
    const queued = packed === undefined;
    const started = performance.now();
    if (!packed) {
      this.#storage.putShard(id, bytes);
      failure = await this.#untilLost(this.#submit(id, firstLine));
      packed = this.#storage.readResult(id);
    }
    this.#storage.remove(id);
    if (!packed) {
      this.crashed++;
      return passThrough(
        bytes,
        firstLine,
        failure
          ? `the queue's workers failed on this shard twice: ${failure}`
          : `its job completed but no result is in ${this.#storage.url} (do the workers mount the work dir at the same path?)`,
      );
    }
    const { out, meta } = openResult(this.#storage.resultName(id), id, this.#key, packed);
    if (meta.fatal) throw CtxfoldError.fromWire(meta.fatal);
    if (meta.attempt > 1) this.retried++;
    this.#seen.add(meta.worker);
    this.shards++;
    if (queued) {
      this.handoff.shards++;
      this.handoff.ms += performance.now() - started - meta.ms;
    }
    return { out, errors: meta.errors, stats: meta.stats, lines: meta.lines };
  }

  async close(): Promise<void> {
    this.#unwatch();
    for (const settle of [...this.#waits.values()]) settle("the queue closed before the shard finished");
    if (this.#lost) {
      // Redis is gone: a graceful close would wait for it, and so may a disconnect.
      void Promise.allSettled([this.#queue.disconnect(), this.#events.disconnect()]);
      return;
    }
    await Promise.allSettled([this.#queue.close(), this.#events.close()]);
  }

  /**
   * Queues the shard (unless its job is queued or running already) and waits for it; the failure's
   * reason, or "". A worker's refusal is thrown: no other worker would take the job.
   */
  async #submit(id: string, firstLine: number): Promise<string> {
    const before = await this.#queue.getJob(id);
    if (before && (await before.isFailed())) await before.remove(); // an earlier batch's failure: try again
    const data: ShardJob = { batch: this.#batch, storage: this.#storage.url, shard: id, firstLine, options: this.#job, key: this.#key };
    const job = await this.#queue.add("shard", data, { jobId: id, attempts: 2, removeOnComplete: true, removeOnFail: { count: 1000 } });
    const reason = await this.#finished(job.id ?? id);
    if (reason === "") return "";
    const refused = /^E_JOB_REFUSED: (.*)$/s.exec(reason);
    if (refused)
      throw new CtxfoldError(
        "E_JOB_REFUSED",
        `a worker refused ${refused[1]} (workers take jobs whose work dir ${this.#storage.url} is inside their --work-dir)`,
      );
    return reason;
  }

  /**
   * The shard's end: "" when its job completed, its failure's reason otherwise. BullMQ's own
   * job.waitUntilFinished checks the job's state from inside a promise nobody awaits, so a queue
   * closed meanwhile (a worker's refusal stops the batch) was an unhandled rejection: here the
   * check's failure is the wait's reason. A completed job is removed at once (removeOnComplete),
   * so one the queue no longer knows has completed; its result file is what proves it.
   */
  #finished(id: string): Promise<string> {
    return new Promise<string>((resolve) => {
      const settle = (reason: string) => {
        this.#waits.delete(id);
        resolve(reason);
      };
      this.#waits.set(id, settle);
      this.#queue
        .getJobState(id)
        .then(async (state) => {
          if (state === "completed" || state === "unknown") settle("");
          else if (state === "failed") settle((await this.#queue.getJob(id))?.failedReason || "failed");
        })
        .catch((err: unknown) => settle(err instanceof Error ? err.message : String(err)));
    });
  }

  /** `p`, or the loss of the queue, whichever comes first. */
  #untilLost<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#lost) return reject(this.#lost);
      const lost = (err: CtxfoldError) => reject(err);
      this.#onLost.add(lost);
      p.then(resolve, reject).finally(() => this.#onLost.delete(lost));
    });
  }
}
