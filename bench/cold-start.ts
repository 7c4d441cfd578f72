/**
 * The first calls of a fresh AI SDK middleware loop, timed: does a call stall while something
 * loads inside it (the exact counter's rank table, built the first time a compaction near the
 * budget counts exactly; the code's first runs)? One real run (the first of 80 messages in the
 * first corpus file of ../shared), replayed as a loop of 10 model calls compacted by
 * ctxfoldMiddleware at a budget the run exceeds, in two shapes: `start`, the run's first 10
 * steps (each prompt the run up to its next assistant message: a loop from its first call), and
 * `resumed`, 10 prompts over the run's second half (the first already over the budget: a loop
 * resumed mid-run, whose first call compacts 40 messages at once). Each mode runs in a process
 * of its own (a fresh thread's tables and code): `cold` calls at once (the middleware starts its
 * warm-up when created, in the background), `warm` awaits Compactor.warmup() first, as a runner
 * does at start. Calls back to back: a runner awaiting its model would leave idle time between
 * them, which only helps.
 *
 *   node dist/bench/cold-start.js [--budget 2500] [--calls 10]
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { parseMessages, renderMessages } from "../src/adapters/index.js";
import { ctxfoldMiddleware } from "../src/integrations/ai-sdk.js";
import { createCompactor } from "../src/policy/index.js";
import { corpusFiles } from "./quality/corpus.js";

type Shape = "start" | "resumed";

interface Args {
  budget: number;
  calls: number;
  mode?: "cold" | "warm";
  shape: Shape;
}

function parseArgs(argv: string[]): Args {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i < 0 ? undefined : argv[i + 1];
  };
  const mode = value("--mode");
  return {
    budget: Number(value("--budget") ?? 2500),
    calls: Number(value("--calls") ?? 10),
    mode: mode === "cold" || mode === "warm" ? mode : undefined,
    shape: value("--shape") === "resumed" ? "resumed" : "start",
  };
}

/** The first corpus run of at least 80 messages, as the AI SDK prompt of each of `calls` steps in `shape` (the run up to a later message each). */
function prompts(calls: number, shape: Shape): unknown[][] {
  const [first] = corpusFiles();
  if (first === undefined) throw new Error("no corpus: ../shared/corpus holds no *.jsonl.gz");
  const lines = gunzipSync(readFileSync(first)).toString("utf8").split("\n").filter(Boolean);
  const run = lines.map((l) => JSON.parse(l) as { messages: unknown[] }).find((r) => r.messages.length >= 80);
  if (!run) throw new Error("no run of 80 messages in the corpus");
  const all = parseMessages(run.messages, { format: "openai-chat" }).messages;
  if (shape === "start") {
    const steps = all.flatMap((m, i) => (m.role === "assistant" && i > 0 ? [i] : [])).slice(0, calls);
    return steps.map((i) => renderMessages(all.slice(0, i), "ai-sdk") as unknown[]);
  }
  return Array.from({ length: calls }, (_, k) => renderMessages(all.slice(0, Math.round(all.length * (0.5 + (0.5 * (k + 1)) / calls))), "ai-sdk") as unknown[]);
}

/** One loop in this process: the milliseconds of each call's transformParams. */
async function loop(args: Args): Promise<number[]> {
  const steps = prompts(args.calls, args.shape);
  const middleware = ctxfoldMiddleware({ budget: args.budget });
  if (args.mode === "warm") await createCompactor().warmup();
  const model = { modelId: "gpt-4o" };
  const ms: number[] = [];
  for (const prompt of steps) {
    const t = performance.now();
    await middleware.transformParams({ type: "generate", params: { prompt } as never, model });
    ms.push(performance.now() - t);
  }
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function report(shape: Shape, mode: string, ms: number[]): string {
  const max = Math.max(...ms);
  const later = Math.max(...ms.slice(1));
  return `| ${shape} | ${mode} | ${ms.map((m) => m.toFixed(0)).join(", ")} | ${median(ms).toFixed(0)} | ${max.toFixed(0)} | ${(max / median(ms)).toFixed(1)}× | ${(ms[0] / later).toFixed(1)}× |`;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.mode) {
    process.stdout.write(JSON.stringify(await loop(args)));
    return;
  }
  const lines = ["| loop | mode | call ms (1–10) | median | max | max / median | first / slowest later |", "|---|---|---|---:|---:|---:|---:|"];
  for (const shape of ["start", "resumed"] as const)
    for (const mode of ["cold", "warm"] as const) {
      const argv = ["--mode", mode, "--shape", shape, "--budget", String(args.budget), "--calls", String(args.calls)];
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...argv], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`${shape} ${mode}: ${r.stderr}`);
      lines.push(report(shape, mode, JSON.parse(r.stdout) as number[]));
    }
  process.stdout.write(`${lines.join("\n")}\n`);
}

await main();
