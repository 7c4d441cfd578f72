/**
 * The Piscina worker: instantiates the core from the WebAssembly.Module the main thread
 * compiled once (workerData), then compacts chunks. Results travel back as one transferred
 * buffer: the output bytes, then the JSON of the error records and stats, then its length; an
 * error that stops a chunk travels back as CtxfoldError's wire form.
 */
import Piscina from "piscina";
import { setCoreModule } from "../core/load-core.js";
import { asCtxfoldError, type CtxfoldError } from "../errors.js";
import { compactChunk, pack, type JobOptions } from "./job.js";

export interface WorkerTask {
  bytes: Uint8Array;
  firstLine: number;
  options: JobOptions;
  /** Which chunk and which try (the crash test hook uses them). */
  chunk: number;
  attempt: number;
}

const data = Piscina.workerData as { coreModule?: WebAssembly.Module } | undefined;
if (data?.coreModule) setCoreModule(data.coreModule);

/**
 * CTXFOLD_TEST_CRASH=<chunk>[:always]: the worker holding that chunk exits mid-task, on the
 * first try only unless `always` (the tests of crash recovery).
 */
function crashHook(task: WorkerTask): void {
  const spec = process.env.CTXFOLD_TEST_CRASH;
  if (!spec) return;
  const [chunk, when] = spec.split(":");
  if (Number(chunk) === task.chunk && (when === "always" || task.attempt === 0)) process.exit(70);
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
  try {
    const r = await compactChunk(task.bytes, task.firstLine, task.options);
    return Piscina.move(pack(r.out, { errors: r.errors, stats: r.stats, lines: r.lines }));
  } catch (err) {
    return asCtxfoldError(err).toWire() satisfies WorkerReply;
  }
}
