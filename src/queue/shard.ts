/**
 * A shard: a run of whole input lines the producer cuts (as the local engine cuts chunks, only
 * larger), a BullMQ job naming it, and its result. Its id is derived from its content, its first
 * line and the job's options, so the same shard of the same batch has the same id in every
 * producer's life (a resumed producer re-attaches to the jobs and results of the one before), and
 * a shard of another input or other options never takes another's result.
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import type { CtxfoldError } from "../errors.js";
import { inOrder } from "../pool/in-order.js";
import { chunksOf, kDefaultChunkBytes } from "../pool/chunks.js";
import { addStats, emptyStats, pack, type ChunkResult, type JobOptions } from "../pool/job.js";
import type { ChunkRunner } from "../pool/worker-pool.js";

/** A job's data: everything a worker on any machine needs, the bytes excepted (in the storage). */
export interface ShardJob {
  /** The producer's life this shard belongs to (a random id; a resumed producer has a new one). */
  batch: string;
  /** The ShardStorage's URL. */
  storage: string;
  shard: string;
  /** The input line number of the shard's first line. */
  firstLine: number;
  options: JobOptions;
  /** The batch's result key (result.ts): workers seal the shard's result with it. */
  key: string;
}

/** What a result carries besides the output bytes. */
export interface ShardMeta extends Omit<ChunkResult, "out"> {
  /** `host:pid` of the worker process that compacted it. */
  worker: string;
  /** Which try this was (1: the first). */
  attempt: number;
  /** Milliseconds the worker spent on it (reading, compacting, writing the result). */
  ms: number;
  /** The error that stopped the shard (E_STORE_WRITE…), which stops the batch as it would locally. */
  fatal?: ReturnType<CtxfoldError["toWire"]>;
}

/** What a shard id is: 32 hex digits (the start of a SHA-256), nothing a path could be made of. */
export const kShardIdPattern = /^[0-9a-f]{32}$/;

export function shardId(options: JobOptions, firstLine: number, bytes: Uint8Array): string {
  return createHash("sha256").update(JSON.stringify(options)).update(`\n${firstLine}\n`).update(bytes).digest("hex").slice(0, 32);
}

export const kWorkerName = `${hostname()}:${process.pid}`;

export const packResult = (r: ChunkResult | undefined, meta: Omit<ShardMeta, keyof Omit<ChunkResult, "out">> & Partial<ShardMeta>): Uint8Array =>
  pack(r?.out ?? new Uint8Array(0), { errors: r?.errors ?? [], stats: r?.stats ?? emptyStats(), lines: r?.lines ?? 0, ...meta } satisfies ShardMeta);

/**
 * Compacts a shard as the local engine compacts its input: cut into chunks of the engine's size,
 * each through `runner`, the results joined in order.
 */
export async function compactShard(bytes: Uint8Array, firstLine: number, runner: ChunkRunner): Promise<ChunkResult> {
  const outs: Uint8Array[] = [];
  const joined: ChunkResult = { out: new Uint8Array(0), errors: [], stats: emptyStats(), lines: 0 };
  // Read as the engine reads a file, in blocks, so the chunks come out of the engine's size.
  const blocks = (async function* () {
    for (let at = 0; at < bytes.length; at += kDefaultChunkBytes)
      yield Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.min(kDefaultChunkBytes, bytes.length - at));
  })();
  await inOrder(
    chunksOf(blocks, kDefaultChunkBytes, firstLine),
    runner,
    async (_bytes, r) => {
      outs.push(r.out);
      joined.errors.push(...r.errors);
      addStats(joined.stats, r.stats);
      joined.lines += r.lines;
    },
    () => false,
  );
  joined.out = Buffer.concat(outs);
  return joined;
}
