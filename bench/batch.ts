/**
 * `npm run bench:batch [-- --mb 200] [--rss-gb 1] [--budget 8000] [--readme] [--json]`: the batch engine
 * end to end, through the built CLI as a user runs it, on the dev corpus uncompressed
 * and repeated to `--mb` MB (generated runs when ../shared is absent). In one session:
 * - baseline: one process reading the same file line by line, JSON.parse + JSON.stringify of
 *   every line, writing the lines out (what any JSONL transform costs at least);
 * - `ctxfold compact --workers 1` (in-process) and `--workers 2` (Piscina pool);
 * - peak RSS of the 2-worker run on the `--mb` input and on a `--rss-gb` GB one.
 * Reported as MB/s and as ratios (absolute speed moves with the machine): a markdown table, or
 * with --json the measurements as JSON (what `npm run bench:gate` reads).
 * CTXFOLD_BENCH_SLOWDOWN=batch:N (see bench/lib.ts) runs the 2-worker compaction N times and
 * reports the total time, to prove the gate trips on "batch: 2 workers / 1 worker".
 */
import { spawnSync } from "node:child_process";
import { closeSync, createReadStream, createWriteStream, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { renderMessages } from "../src/adapters/index.js";
import { generateRuns } from "../src/gen/run.js";
import { kSlowdownEnv, parseSlowdown, rewriteReadmeSection } from "./lib.js";

const kCli = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const kCorpus = fileURLToPath(new URL("../../../shared/corpus/dev.jsonl.gz", import.meta.url));

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** The corpus lines (or generated ones) written repeatedly until the file holds `mb` MB. */
function makeInput(file: string, mb: number): { source: string; bytes: number } {
  const source = existsSync(kCorpus) ? "dev corpus" : "generated runs (../shared absent)";
  const body = existsSync(kCorpus)
    ? gunzipSync(readFileSync(kCorpus))
    : Buffer.from(generateRuns(200, 3).map((r) => JSON.stringify({ messages: renderMessages(r.messages, "openai-chat") })).join("\n") + "\n");
  const fd = openSync(file, "w");
  let bytes = 0;
  while (bytes < mb * 1e6) {
    writeSync(fd, body);
    bytes += body.length;
  }
  closeSync(fd);
  return { source, bytes };
}

async function baseline(input: string, output: string): Promise<number> {
  const t = performance.now();
  const out = createWriteStream(output);
  for await (const line of createInterface({ input: createReadStream(input, { highWaterMark: 1 << 20 }), crlfDelay: Infinity })) {
    if (!out.write(JSON.stringify(JSON.parse(line)) + "\n")) await new Promise<void>((r) => out.once("drain", () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  return (performance.now() - t) / 1000;
}

interface Run {
  seconds: number;
  peakRssMB: number;
  runs: number;
  compacted: number;
  errors: number;
}

function ctxfold(dir: string, input: string, workers: number, budget: number): Run {
  const out = path.join(dir, `out-${workers}.jsonl`);
  rmSync(`${out}.offload`, { recursive: true, force: true });
  const t = performance.now();
  const r = spawnSync(process.execPath, [kCli, "compact", input, "-o", out, "--budget", String(budget), "--workers", String(workers), "--json", "--quiet"], { encoding: "utf8", maxBuffer: 1 << 26 });
  const wall = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`ctxfold compact exited ${r.status}: ${r.stderr}`);
  const s = JSON.parse(r.stdout) as Run;
  rmSync(out, { force: true });
  rmSync(`${out}.offload`, { recursive: true, force: true });
  return { ...s, seconds: wall };
}

async function main(): Promise<void> {
  const mb = arg("mb", 200);
  const rssGb = arg("rss-gb", 1);
  const budget = arg("budget", 8000);
  const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-bench-batch-"));
  try {
    const input = path.join(dir, "in.jsonl");
    const { source, bytes } = makeInput(input, mb);
    const mbs = (s: number) => bytes / 1e6 / s;
    const base = await baseline(input, path.join(dir, "base.jsonl"));
    rmSync(path.join(dir, "base.jsonl"));
    const one = ctxfold(dir, input, 1, budget);
    const two = ctxfold(dir, input, 2, budget);
    const slowdown = parseSlowdown(process.env[kSlowdownEnv]).filter((s) => s.target === "batch").reduce((n, s) => n * s.factor, 1);
    for (let i = 1; i < slowdown; i++) two.seconds += ctxfold(dir, input, 2, budget).seconds;
    let big: Run | undefined;
    let bigBytes = 0;
    if (rssGb > 0) {
      const bigInput = path.join(dir, "big.jsonl");
      bigBytes = makeInput(bigInput, rssGb * 1000).bytes;
      rmSync(input);
      big = ctxfold(dir, bigInput, 2, budget);
    }
    const cpu = cpus()[0]?.model ?? "unknown CPU";
    const md = [
      `${source}, ${(bytes / 1e6).toFixed(0)} MB (${one.runs.toLocaleString("en-US")} runs, ${one.compacted.toLocaleString("en-US")} compacted at budget ${budget.toLocaleString("en-US")}), ${availableParallelism()} cores (${cpu}), ${new Date().toISOString().slice(0, 10)}.`,
      "",
      "| pass over the same lines | MB/s | vs baseline | vs 1 worker | peak RSS | target |",
      "|---|---:|---:|---:|---:|---|",
      `| baseline: JSON.parse + JSON.stringify per line | ${mbs(base).toFixed(1)} | 1.00x | | | |`,
      `| ctxfold compact --workers 1 (in-process) | ${mbs(one.seconds).toFixed(1)} | ${(base / one.seconds).toFixed(2)}x | 1.00x | ${one.peakRssMB} MB | ≥ 0.60x baseline |`,
      `| ctxfold compact --workers 2 (pool) | ${mbs(two.seconds).toFixed(1)} | ${(base / two.seconds).toFixed(2)}x | ${(one.seconds / two.seconds).toFixed(2)}x | ${two.peakRssMB} MB | ≥ 1.7x 1 worker |`,
      ...(big ? [`| ctxfold compact --workers 2, ${(bigBytes / 1e9).toFixed(2)} GB input | ${(bigBytes / 1e6 / big.seconds).toFixed(1)} | | | ${big.peakRssMB} MB (${((big.peakRssMB / two.peakRssMB - 1) * 100).toFixed(0)}% vs ${(bytes / 1e6).toFixed(0)} MB) | ≤ 300 MB, within 10% |`] : []),
    ].join("\n");
    if (process.argv.includes("--readme")) rewriteReadmeSection("batch", md);
    const json = { source, bytes, budget, cores: availableParallelism(), cpu, baselineSeconds: base, workers1: one, workers2: two, big: big ? { bytes: bigBytes, ...big } : null };
    process.stdout.write(process.argv.includes("--json") ? JSON.stringify(json, null, 2) + "\n" : md + "\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:batch: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
