/**
 * `npm run bench:queue [-- --mb 112] [--budget 8000] [--shard-mb 4] [--docs] [--json]`:
 * distributed batches on this machine, through the built CLI as a user runs them, against the
 * local engine, on the dev corpus repeated to `--mb` MB (copies after the first salted, as
 * bench:batch makes them, so no memo answers for a copy). On one redis-server (started here):
 * - `ctxfold compact --workers 1` (in-process): the reference output and time;
 * - `ctxfold compact --queue` with 1 and with 2 `ctxfold worker` processes;
 * - the same with 2 workers, one killed (SIGKILL) once a third of the output is written;
 * - the queue's own cost per shard: the producer in this process with one shard in flight and an
 *   idle worker, each shard's round trip less the worker's time on it (the corpus once).
 * Every queue run's output must be byte-identical to the local one (the bench fails otherwise).
 * Workers run with --stall-ms 5000, so the killed worker's shard is handed over after 5 s.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { runBatch } from "../src/pool/engine.js";
import { queueAddress } from "../src/queue/address.js";
import { queueRunner, type QueueRunner } from "../src/queue/producer.js";
import { DirStorage } from "../src/queue/storage.js";
import { makeInput } from "./batch-input.js";
import { rewriteDocSection } from "./lib.js";
import { startRedis, startWorkerProcess, type LocalRedis, type WorkerProcess } from "./redis.js";

const kCli = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const kStallMs = "5000";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

interface Summary {
  runs: number;
  retried: number;
  crashed: number;
  workers: number;
  queue?: { shards: number };
}

interface Timed {
  seconds: number;
  summary: Summary;
}

/** `ctxfold ARGS --json --quiet`, timed; `during` is called every 100 ms while it runs. */
async function ctxfold(args: string[], during?: () => void): Promise<Timed> {
  const t = performance.now();
  const child = spawn(process.execPath, [kCli, ...args, "--json", "--quiet"], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const timer = during ? setInterval(during, 100) : undefined;
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  clearInterval(timer);
  if (code !== 0) throw new Error(`ctxfold ${args[0]} exited ${code}: ${err}`);
  return { seconds: (performance.now() - t) / 1000, summary: JSON.parse(out) as Summary };
}

/** `run` with `n` worker processes up, confined to `dir`; they are stopped (SIGTERM) after it. */
async function withWorkers<T>(redis: LocalRedis, dir: string, n: number, run: (workers: WorkerProcess[]) => Promise<T>): Promise<T> {
  const workers = await Promise.all(
    Array.from({ length: n }, () => startWorkerProcess(kCli, redis.url, ["--work-dir", dir, "--stall-ms", kStallMs, "--quiet"])),
  );
  try {
    return await run(workers);
  } finally {
    await Promise.all(workers.map((w) => w.kill("SIGTERM")));
  }
}

/** Mean ms per shard of the queue's own cost: one shard in flight, one idle worker, the producer here. */
async function handoffMs(dir: string, input: string, redis: LocalRedis, budget: number, shardMb: number): Promise<{ ms: number; shards: number }> {
  return withWorkers(redis, dir, 1, async () => {
    let runner: QueueRunner | undefined;
    const output = path.join(dir, "handoff.jsonl");
    await runBatch({
      input,
      output,
      budget,
      format: "auto",
      mode: "tiered",
      workers: 1,
      offloadDir: `${output}.offload`,
      chunkBytes: shardMb * (1 << 20),
      runner: async (job, resume) =>
        (runner = await queueRunner(job, {
          address: queueAddress(redis.url),
          storage: new DirStorage(`${output}.work`),
          capacity: 1,
          fresh: !resume,
          graceMs: 30_000,
        })),
    });
    return { ms: runner!.handoff.ms / runner!.handoff.shards, shards: runner!.handoff.shards };
  });
}

async function main(): Promise<void> {
  const mb = arg("mb", 112);
  const budget = arg("budget", 8000);
  const shardMb = arg("shard-mb", 4);
  const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-bench-queue-"));
  const redis = await startRedis();
  try {
    const input = path.join(dir, "in.jsonl");
    const { source, bytes } = makeInput(input, mb);
    const once = path.join(dir, "once.jsonl");
    makeInput(once, 0);
    const local = path.join(dir, "local.jsonl");
    const base = ["--budget", String(budget)];
    const reference = await ctxfold(["compact", input, "-o", local, ...base, "--workers", "1"]);
    const expected = readFileSync(local);
    /** A queue run to `name`.jsonl, its output checked against the local one, then removed. */
    const queued = async (name: string, during?: (out: string) => void): Promise<Timed> => {
      const out = path.join(dir, `${name}.jsonl`);
      const r = await ctxfold(["compact", input, "-o", out, ...base, "--queue", redis.url, "--shard-mb", String(shardMb)], during && (() => during(out)));
      if (!readFileSync(out).equals(expected)) throw new Error(`${name}: the output differs from ctxfold compact --workers 1's`);
      rmSync(out);
      rmSync(`${out}.offload`, { recursive: true, force: true });
      return r;
    };
    const one = await withWorkers(redis, dir, 1, () => queued("one"));
    const two = await withWorkers(redis, dir, 2, () => queued("two"));
    let killedAt = 0;
    const killed = await withWorkers(redis, dir, 2, ([victim]) =>
      queued("killed", (out) => {
        let size = 0;
        try {
          size = statSync(out).size;
        } catch {
          return;
        }
        if (killedAt === 0 && size >= expected.length / 3) {
          killedAt = size;
          void victim.kill("SIGKILL");
        }
      }),
    );
    if (killedAt === 0) throw new Error("the killed run finished before a third of its output was written");
    const handoff = await handoffMs(dir, once, redis, budget, 1);

    const mbs = (t: Timed) => (bytes / 1e6 / t.seconds).toFixed(1);
    const row = (what: string, t: Timed, note: string) =>
      `| ${what} | ${t.seconds.toFixed(1)} | ${mbs(t)} | ${(reference.seconds / t.seconds).toFixed(2)}x | ${note} |`;
    const md = [
      `Measured (\`npm run bench:queue -- --docs\`, ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${availableParallelism()} cores; ${source}`,
      `repeated to ${(bytes / 1e6).toFixed(0)} MB, copies salted; budget ${budget}; shards of ${shardMb} MB; redis-server on this machine):`,
      "",
      "| run | seconds | MB/s | vs local, 1 worker | output |",
      "|---|---|---|---|---|",
      row("`compact --workers 1` (in-process)", reference, `reference (${reference.summary.runs} runs)`),
      row("`compact --queue`, 1 worker process", one, `byte-identical, ${one.summary.queue?.shards} shards`),
      row("`compact --queue`, 2 worker processes", two, `byte-identical; ${(one.seconds / two.seconds).toFixed(2)}x of 1 process`),
      row(
        "`compact --queue`, 2 workers, one killed at a third",
        killed,
        `byte-identical; ${killed.summary.retried} shard retried, ${killed.summary.crashed} written through`,
      ),
      "",
      `The queue's own cost per shard (one shard in flight, an idle worker; the round trip less the worker's time on it, over ${handoff.shards} shards of 1 MB): **${handoff.ms.toFixed(1)} ms**.`,
    ].join("\n");
    if (process.argv.includes("--docs")) rewriteDocSection("bench-queue", md);
    const json = { source, bytes, budget, shardMb, reference, one, two, killed, handoff };
    process.stdout.write(process.argv.includes("--json") ? JSON.stringify(json, null, 2) + "\n" : md + "\n");
  } finally {
    await redis.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:queue: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
