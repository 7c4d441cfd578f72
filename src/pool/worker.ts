/**
 * The Piscina worker: instantiates the core from the WebAssembly.Module the main thread
 * compiled once (workerData), then compacts chunks. Results travel back as one transferred
 * buffer: the output bytes, then the JSON of the error records and stats, then its length; an
 * error that stops a chunk travels back as CtxfoldError's wire form.
 */
import Piscina from "piscina";
import { setCoreModule } from "../core/load-core.js";
import { asCtxfoldError, type CtxfoldError } from "../errors.js";
import { adoptRankTable, type SharedRankTable } from "../tokens/bpe.js";
import { compactChunk, pack, type JobOptions } from "./job.js";

export interface WorkerTask {
  bytes: Uint8Array;
  firstLine: number;
  options: JobOptions;
  /** Which chunk and which try (the crash test hook uses them). */
  chunk: number;
  attempt: number;
  /** The exact counter's rank table, packed once by the main thread for every worker to read (see adoptRankTable). */
  ranks?: SharedRankTable;
}

/**
 * The worker holding chunk `chunk` exits mid-task, on its first try only unless `always`: set only
 * by the tests of crash recovery (BatchOptions.testHooks), never by the ctxfold command.
 */
export interface CrashHook {
  chunk: number;
  always?: boolean;
  /** Die by exhausting the worker's heap (as a run too big for it does) rather than by exiting. */
  oom?: boolean;
}

/** What every worker is started with. */
export interface WorkerData {
  /** The core the main thread compiled once. */
  coreModule: WebAssembly.Module;
  /** The worker's heap cap, MB (0: V8's own limits); see compactChunk. */
  heapMb: number;
  crash?: CrashHook;
}

const data = Piscina.workerData as Partial<WorkerData> | undefined;
if (data?.coreModule) setCoreModule(data.coreModule);

function crashHook(task: WorkerTask): void {
  const crash = data?.crash;
  if (!crash || crash.chunk !== task.chunk || !(crash.always || task.attempt === 0)) return;
  if (!crash.oom) process.exit(70);
  const held: number[][] = [];
  for (;;) held.push(new Array<number>(4096).fill(held.length));
}

/** What a task resolves with: the packed result, or the CtxfoldError that stopped the chunk, on the wire. */
export type WorkerReply = Uint8Array | ReturnType<CtxfoldError["toWire"]>;

/**
 * Compacts a chunk. An error is returned, not thrown: the main thread takes a task that rejects
 * for a dead worker (retried, then written through as E_WORKER_CRASH), and a thrown error would
 * reach it without its class and code; returned, it is rebuilt and stops the batch as it does
 * in-process (compactChunk throws only what is fatal, such as E_STORE_WRITE).
 */
export default async function run(task: WorkerTask): Promise<unknown> {
  crashHook(task);
  if (task.ranks) adoptRankTable(task.ranks);
  try {
    const r = await compactChunk(task.bytes, task.firstLine, task.options, data?.heapMb ?? 0);
    return Piscina.move(pack(r.out, { errors: r.errors, stats: r.stats, lines: r.lines }));
  } catch (err) {
    return asCtxfoldError(err).toWire() satisfies WorkerReply;
  }
}
