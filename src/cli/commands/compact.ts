import { closeSync, openSync, readSync } from "node:fs";
import { availableParallelism } from "node:os";
import * as path from "node:path";
import type { PresetName } from "../../steps/config.js";
import { runBatch, type BatchOptions, type BatchSummary } from "../../pool/engine.js";
import { kDefaultMaxLineBytes } from "../../pool/input.js";
import type { JobOptions } from "../../pool/job.js";
import { readConfigFile, type ConfigFileSettings } from "../../policy/config-file.js";
import type { ChunkRunner } from "../../pool/worker-pool.js";
import type { QueueRunner } from "../../queue/producer.js";
import { kDefaultOffloadPrefix, refPattern } from "../../store/index.js";
import { ProgressLine } from "../progress.js";
import { num } from "../runs.js";
import {
  formatOption,
  heapMbOption,
  intOption,
  modeOption,
  queueOption,
  kExit,
  parseCli,
  presetOption,
  shownName,
  threadsOption,
  UsageError,
  type CliIo,
  type CliTestHooks,
} from "../common.js";
import { kQueuePeers, loadWithPeers } from "../optional-peers.js";

const kOptions = {
  output: { type: "string", short: "o" },
  budget: { type: "string" },
  format: { type: "string" },
  mode: { type: "string" },
  preset: { type: "string" },
  config: { type: "string" },
  "offload-dir": { type: "string" },
  workers: { type: "string" },
  resume: { type: "boolean" },
  strict: { type: "boolean" },
  json: { type: "boolean" },
  quiet: { type: "boolean" },
  "max-worker-heap-mb": { type: "string" },
  "redact-offload": { type: "boolean" },
  queue: { type: "string" },
  "shard-mb": { type: "string" },
  "work-dir": { type: "string" },
  "max-line-mb": { type: "string" },
} as const;

/** On two cores, the bytes of runs from which the default is a pool of 2 (below: in-process; see defaultWorkers). */
export const kTwoCoreInProcessBelow = 48 * 2 ** 20;

/**
 * `ctxfold compact IN -o OUT --budget N [...]` (docs/batch.md). Originals of what is removed or
 * shortened go to --offload-dir, by default `OUT.offload/` beside the output (`./ctxfold-offload/`
 * when writing to stdout). Without --workers: one less than the machine's cores (at most 8), as
 * the main thread reads, cuts and writes, and V8's collectors need a core too; on 2 cores, where
 * that would be one (the in-process path), 2 workers for an input of 48 MiB of runs or more (a
 * .gz: uncompressed), and in-process below. Measured there on unique runs into a fresh offload
 * dir (docs/batch.md): a pool of 2 takes 0.78–0.91× the time of in-process from 64 MB, and
 * 1.07–1.15× up to 32 MB, where its start (each worker's modules, JIT and first runs) is not
 * repaid. One worker, or an input under 1 MiB, compacts in-process.
 */
export function defaultWorkers(cores = availableParallelism()): { workers: number; inProcessBelow?: number } {
  if (cores === 2) return { workers: 2, inProcessBelow: kTwoCoreInProcessBelow };
  return { workers: Math.max(1, Math.min(8, cores - 1)) };
}

/** What the command line asks of the batch, checked; `queue` is --queue's runner and report. */
interface CompactFlags {
  input: string;
  output: string;
  budget: number;
  format: BatchOptions["format"];
  mode: "tiered" | "legacy";
  preset: string | undefined;
  config: ConfigFileSettings | undefined;
  workers: number;
  /** With the default workers: the bytes of runs below which the batch stays in-process (defaultWorkers). */
  inProcessBelow?: number;
  workerHeapMb: number;
  maxLineMb: number;
  offloadDir: string;
  quiet: boolean;
  json: boolean;
  resume: boolean;
  strict: boolean;
  redactOffload: boolean;
  queue: QueueFlags | undefined;
}

export async function compact(argv: string[], io: CliIo, hooks: CliTestHooks = {}): Promise<number> {
  const flags = compactFlags(argv, io);
  const progress = flags.quiet ? undefined : new ProgressLine(io, undefined, !io.stderrIsTTY);
  const summary = await runBatch(batchOptions(flags, io, hooks, progress));
  progress?.clear();
  const report: Report = { ...summary, offloadDir: flags.offloadDir, ...(flags.queue ? { queue: flags.queue.report() } : {}) };
  if (flags.json) (flags.output === "-" ? io.stderr : io.stdout).write(JSON.stringify(report) + "\n");
  else if (!flags.quiet) io.stderr.write(summaryTable(report, sampleRef(flags.output)) + "\n");
  if (summary.interrupted) {
    if (!flags.quiet)
      io.stderr.write(
        `ctxfold: stopped after line ${summary.lines}; ${summary.checkpoint ? `rerun with --resume to continue (${summary.checkpoint})` : "output was stdout, so there is no checkpoint"}\n`,
      );
    return kExit.interrupted;
  }
  return summary.errors > 0 ? kExit.partial : kExit.ok;
}

/** The command line's flags, checked in order (a UsageError names what is wrong; a --workers over the cap is said on stderr). */
function compactFlags(argv: string[], io: CliIo): CompactFlags {
  const { values, positionals } = parseCli(argv, kOptions);
  const [input, ...rest] = positionals;
  if (input === undefined) throw new UsageError("compact needs an input file (or - for stdin)");
  if (rest.length) throw new UsageError(`unknown arguments: ${rest.join(" ")}`);
  const output = values.output as string | undefined;
  if (output === undefined) throw new UsageError("-o OUT is required (- for stdout)");
  const budget = intOption(values.budget as string | undefined, "budget");
  const format = formatOption(values.format as string | undefined) ?? "auto";
  // A config file's settings; the flags given win over it (a mode, preset or redaction it sets
  // applies where the flag is not given).
  const config = values.config === undefined ? undefined : readConfigFile(values.config as string);
  const mode = values.mode === undefined && config?.mode !== undefined ? config.mode : modeOption(values.mode as string | undefined);
  const preset = presetOption(values.preset as string | undefined) ?? config?.stepPreset;
  // With --queue the batch runs in ctxfold worker processes, not threads of this one.
  const byDefault = values.queue === undefined && values.workers === undefined ? defaultWorkers() : undefined;
  const workers =
    values.queue === undefined
      ? threadsOption(values.workers as string | undefined, "compact", "workers", byDefault?.workers ?? 1, io)
      : intOption(values.workers as string | undefined, "workers", 1);
  const workerHeapMb = heapMbOption(values["max-worker-heap-mb"] as string | undefined);
  const maxLineMb = intOption(values["max-line-mb"] as string | undefined, "max-line-mb", kDefaultMaxLineBytes / 2 ** 20);
  const offloadDir = (values["offload-dir"] as string | undefined) ?? (output === "-" ? "ctxfold-offload" : `${output}.offload`);
  const quiet = Boolean(values.quiet);
  const queue = values.queue === undefined ? undefined : queueFlags(values, output);
  return {
    input,
    output,
    budget,
    format,
    mode,
    preset,
    config,
    workers,
    ...(byDefault?.inProcessBelow !== undefined ? { inProcessBelow: byDefault.inProcessBelow } : {}),
    workerHeapMb,
    maxLineMb,
    // Workers on other machines write where the producer names, so the name must not depend on a cwd.
    offloadDir: queue ? path.resolve(offloadDir) : offloadDir,
    quiet,
    json: Boolean(values.json),
    resume: Boolean(values.resume),
    strict: Boolean(values.strict),
    redactOffload: Boolean(values["redact-offload"]) || config?.redactOffload === true,
    queue,
  };
}

/** The batch the flags ask for, its progress drawn on `progress`, its line errors told on stderr. */
function batchOptions(flags: CompactFlags, io: CliIo, hooks: CliTestHooks, progress: ProgressLine | undefined): BatchOptions {
  const { input, output, budget, format, mode, preset, config, workers, inProcessBelow, offloadDir, workerHeapMb, maxLineMb, queue } = flags;
  return {
    input,
    output,
    budget,
    format,
    mode,
    workers,
    ...(inProcessBelow !== undefined ? { inProcessBelow } : {}),
    offloadDir,
    workerHeapMb,
    maxLineBytes: maxLineMb * 2 ** 20,
    ...(preset ? { preset: preset as PresetName } : {}),
    ...(config ? { config } : {}),
    resume: flags.resume,
    strict: flags.strict,
    redactOffload: flags.redactOffload,
    stdin: io.stdin,
    stdout: io.stdout,
    onInterrupt: (stop) => stopOnInterrupt(io, stop, flags.quiet, queue !== undefined, progress),
    onProgress: progress ? (p) => progress.draw(p) : undefined,
    onError: (e) => io.stderr.write(`ctxfold: ${shownName(input)}:${e.line}: ${e.code}: ${e.reason} (written through unchanged)\n`),
    ...(queue ? { runner: (job, resume) => queue.runner(job, resume, hooks.compact?.queueGraceMs), chunkBytes: queue.shardBytes } : {}),
    ...(hooks.compact?.chunkBytes !== undefined ? { chunkBytes: hooks.compact.chunkBytes } : {}),
    ...(hooks.compact?.testHooks ? { testHooks: hooks.compact.testHooks } : {}),
  };
}

/**
 * Stops the batch on an interrupt: the first lets the chunks (a queue's shards) in flight finish,
 * the next drops them; each says so on stderr unless --quiet. Returns the handler's removal.
 */
function stopOnInterrupt(io: CliIo, stop: () => void, quiet: boolean, queued: boolean, progress: ProgressLine | undefined): () => void {
  let interrupts = 0;
  return io.onInterrupt(() => {
    progress?.clear();
    if (!quiet) {
      io.stderr.write(
        interrupts++ === 0
          ? `ctxfold: interrupted: finishing the ${queued ? "shards" : "chunks"} in flight${queued ? " (they need a worker)" : ""}… (again to stop at once)\n`
          : `ctxfold: stopping at once: the ${queued ? "shards" : "chunks"} in flight are dropped (--resume redoes them${queued ? "; queued ones stay queued" : ""})\n`,
      );
    }
    stop();
  });
}

/** The summary as printed (--json) or tabled: the batch's, where its originals went, and for a queue where its shards went. */
type Report = BatchSummary & { offloadDir: string; queue?: QueueReport };

interface QueueReport {
  url: string;
  workDir: string;
  shards: number;
}

/** Default shard size, MB: ~1 s of one worker's compaction (bench:queue), against ~11 ms of the queue's own per shard. */
const kDefaultShardMb = 4;
/** Bytes of shards held in flight at most (each is kept until written, for the checkpoint's hash). */
const kQueueInFlightBytes = 256 << 20;
/** How long a batch waits for an unreachable Redis before it stops (checkpoint written), ms. */
const kQueueGraceMs = 30_000;

/** --queue's runner and report (queueFlags). */
type QueueFlags = ReturnType<typeof queueFlags>;

/** --queue, --shard-mb and --work-dir, checked; the runner is created (and bullmq loaded) only when the batch starts. */
function queueFlags(values: Record<string, string | boolean | undefined>, output: string) {
  const address = queueOption(values.queue as string);
  const shardText = values["shard-mb"] as string | undefined;
  const shardMb = shardText === undefined ? kDefaultShardMb : Number(shardText);
  if (!(shardMb > 0) || shardMb > 1024) throw new UsageError(`--shard-mb: expected a number of MB in (0, 1024], got ${JSON.stringify(shardText)}`);
  const shardBytes = Math.round(shardMb * (1 << 20));
  const workDir = path.resolve((values["work-dir"] as string | undefined) ?? (output === "-" ? "ctxfold-work" : `${output}.work`));
  let runner: QueueRunner | undefined;
  return {
    shardBytes,
    runner: async (job: JobOptions, resume: boolean, graceMs = kQueueGraceMs): Promise<ChunkRunner> => {
      const { queueRunner } = await loadWithPeers(() => import("../../queue/producer.js"), kQueuePeers, "ctxfold compact --queue");
      const { DirStorage } = await import("../../queue/storage.js");
      const capacity = Math.max(2, Math.min(64, Math.floor(kQueueInFlightBytes / shardBytes)));
      return (runner = await queueRunner(job, { address, storage: new DirStorage(workDir), capacity, fresh: !resume, graceMs }));
    },
    report: (): QueueReport => ({ url: address.shown, workDir, shards: runner?.shards ?? 0 }),
  };
}

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

/** The closing summary (stderr). */
export function summaryTable(s: Report, ref?: string): string {
  const rows: [string, string][] = [
    [
      "runs",
      `${num(s.runs)} (${num(s.compacted)} compacted, ${num(s.fit)} within budget, ${num(s.errors)} errors${s.infeasible ? `, ${num(s.infeasible)} over budget: critical messages alone exceed it` : ""})`,
    ],
    ["tokens in → out", `${num(s.tokensIn)} → ${num(s.tokensOut)} (estimated)`],
    ["savings", s.tokensIn > 0 ? `${((1 - s.tokensOut / s.tokensIn) * 100).toFixed(1)}% saved` : "-"],
    ["tiers", `normal ${num(s.tiers.normal)} · pressure ${num(s.tiers.pressure)} · critical ${num(s.tiers.critical)}`],
    ["offloaded", `${mb(s.offloadedBytes)} to ${s.offloadDir}`],
    ["bytes in → out", `${mb(s.bytesIn)} → ${mb(s.bytesOut)}`],
    [
      "time",
      `${s.seconds.toFixed(1)} s, ${num(s.runs / Math.max(s.seconds, 1e-9))} runs/s, ${(s.bytesIn / 1e6 / Math.max(s.seconds, 1e-9)).toFixed(1)} MB/s, ${s.queue ? `${s.workers} worker process${s.workers === 1 ? "" : "es"}` : s.workers === 0 ? "in-process" : `${s.workers} workers`}`,
    ],
  ];
  if (s.queue) rows.push(["queue", `${s.queue.url}: ${num(s.queue.shards)} shards through ${s.queue.workDir}`]);
  if (s.resumedAfterLine > 0) rows.push(["resumed", `after line ${num(s.resumedAfterLine)}`]);
  if (s.retried > 0 || s.crashed > 0) rows.push(["worker crashes", `${s.retried} ${s.queue ? "shards" : "chunks"} retried, ${s.crashed} written through`]);
  if (s.errors > 0 && s.errorsFile) rows.push(["errors", s.errorsFile]);
  if (ref !== undefined) rows.push(["a ref", `${ref}: ctxfold show ${ref} --offload-dir ${s.offloadDir}`]);
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join("\n");
}

/**
 * A ref the output names (the first in its first MiB, a history's when there is one there), for
 * the summary's example of reading one back; none for stdout or an output that names none.
 */
function sampleRef(output: string): string | undefined {
  if (output === "-") return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(output, "r");
    const head = Buffer.alloc(1 << 20);
    const text = head.subarray(0, readSync(fd, head, 0, head.length, 0)).toString("utf8");
    const refs = text.match(refPattern(kDefaultOffloadPrefix)) ?? [];
    return refs.find((r) => r.includes("/history_")) ?? refs[0];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
