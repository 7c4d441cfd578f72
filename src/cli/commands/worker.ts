import { heapMbOption, intOption, kExit, parseCli, queueOption, threadsOption, UsageError, type CliIo, type CliTestHooks } from "../common.js";
import { kQueuePeers, loadWithPeers } from "../optional-peers.js";

const kOptions = {
  queue: { type: "string" },
  "work-dir": { type: "string" },
  concurrency: { type: "string" },
  "offload-dir": { type: "string" },
  "stall-ms": { type: "string" },
  "max-worker-heap-mb": { type: "string" },
  quiet: { type: "boolean" },
} as const;

/**
 * BullMQ's lock on a shard and its stalled-job check, ms: a worker silent this long (killed, or a
 * machine gone) loses its shard to another worker. Compaction runs in the worker's threads, so a
 * busy worker's main thread renews its locks on time.
 */
const kDefaultStallMs = 30_000;

/**
 * `ctxfold worker --queue redis://HOST:PORT --work-dir DIR [--concurrency N] [--offload-dir DIR]
 * [--stall-ms N] [--max-worker-heap-mb N|0] [--quiet]`: takes shards of `ctxfold compact --queue`
 * batches until SIGINT/SIGTERM (docs/batch.md, "Scaling out"). One line per shard on stderr unless
 * --quiet. --work-dir is the root every job's work dir must be inside (and its offload dir, unless
 * --offload-dir names the one this worker writes to): a job naming anything else is refused.
 */
export async function worker(argv: string[], io: CliIo, hooks: CliTestHooks = {}): Promise<number> {
  const { values, positionals } = parseCli(argv, kOptions);
  if (positionals.length) throw new UsageError(`unknown arguments: ${positionals.join(" ")}`);
  if (values.queue === undefined) throw new UsageError("--queue redis://HOST:PORT is required");
  const address = queueOption(values.queue as string);
  if (values["work-dir"] === undefined) throw new UsageError("--work-dir DIR is required: the shared dir every job's work dir must be inside");
  const quiet = Boolean(values.quiet);
  const log = (line: string) => io.stderr.write(`ctxfold worker: ${line}\n`);
  const { runQueueWorker } = await loadWithPeers(() => import("../../queue/worker.js"), kQueuePeers, "ctxfold worker");
  const { workerRoots } = await import("../../queue/confine.js");
  await runQueueWorker({
    address,
    log,
    verbose: !quiet,
    roots: workerRoots(values["work-dir"] as string, values["offload-dir"] as string | undefined),
    concurrency: threadsOption(values.concurrency as string | undefined, "worker", "concurrency", 1, io),
    stallMs: intOption(values["stall-ms"] as string | undefined, "stall-ms", kDefaultStallMs),
    heapMb: heapMbOption(values["max-worker-heap-mb"] as string | undefined),
    onStop: (handler) => io.onInterrupt(handler),
    ...(hooks.worker?.dieAtLine !== undefined ? { dieAtLine: hooks.worker.dieAtLine } : {}),
  });
  return kExit.ok;
}
