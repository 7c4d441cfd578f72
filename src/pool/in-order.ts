/**
 * The batch's pipeline between its input and its output: chunks compacted through a runner, at
 * most its capacity in flight, written in input order; a line over the line limit written in its
 * place, once every chunk before it is.
 */
import { CtxfoldError } from "../errors.js";
import type { InputPiece, LongLine } from "./chunks.js";
import type { ChunkResult } from "./job.js";
import type { ChunkRunner } from "./worker-pool.js";

/**
 * Compacts `chunks` through `runner`, at most its capacity in flight (reading waits for a free
 * slot), and writes each result in input order as soon as it and those before it are done; stops
 * reading once `stopping()` says so and finishes the chunks in flight, or returns without them
 * once `drop` is aborted.
 */
export async function inOrder(
  chunks: AsyncIterable<InputPiece>,
  runner: ChunkRunner,
  write: (bytes: Uint8Array, result: ChunkResult) => Promise<void>,
  stopping: () => boolean,
  drop?: AbortSignal,
  writeLong?: (long: LongLine, line: number) => Promise<boolean>,
): Promise<void> {
  const inFlight = new Map<number, { bytes: Uint8Array; result: Promise<ChunkResult> }>();
  let next = 0; // the next chunk to write
  let issued = 0;
  /** Writes the next result; false when the chunks in flight were dropped instead. */
  const writeNext = async (): Promise<boolean> => {
    const { bytes, result } = inFlight.get(next)!;
    inFlight.delete(next);
    next++;
    const r = await new Promise<ChunkResult | undefined>((resolve, reject) => {
      if (drop?.aborted) return resolve(undefined);
      const dropped = () => resolve(undefined);
      drop?.addEventListener("abort", dropped, { once: true });
      result.then(resolve, reject).finally(() => drop?.removeEventListener("abort", dropped));
    });
    if (r === undefined) return false;
    await write(bytes, r);
    return true;
  };
  for await (const { bytes, long, firstLine } of chunks) {
    if (stopping()) break;
    if (long) {
      // Written in its place: after every chunk before it, before any after it is read.
      while (inFlight.size > 0) if (!(await writeNext())) return;
      if (!writeLong) throw new CtxfoldError("E_INTERNAL", `line ${firstLine}: a line over the line limit with nowhere to write it`);
      if (!(await writeLong(long, firstLine))) return;
      continue;
    }
    const result = runner.run(bytes, firstLine, issued);
    result.catch(() => undefined); // awaited in order by writeNext
    inFlight.set(issued++, { bytes, result });
    if (inFlight.size >= runner.capacity && !(await writeNext())) return;
  }
  while (inFlight.size > 0) if (!(await writeNext())) return;
}
