/**
 * `npm run bench:batch [-- --mb 200] [--rss-gb 1] [--budget 8000] [--no-corpus-once] [--docs] [--json]`:
 * the batch engine end to end, through the built CLI as a user runs it, on unique data: the dev
 * corpus uncompressed, its copies after the first salted (saltRun) until the file holds `--mb`
 * MB (generated runs when ../shared is absent), and on the dev corpus once. In one session:
 * - baseline: one process reading the same file in blocks, splitting on newlines,
 *   JSON.parse + JSON.stringify of every line, writing the lines out in blocks (what any JSONL
 *   transform costs at least);
 * - `ctxfold compact --workers 1` (in-process) and `--workers 2` (Piscina pool);
 * - peak RSS of the 2-worker run on the `--mb` input and on a unique `--rss-gb` GB one.
 * Reported as MB/s and as ratios (absolute speed moves with the machine): a markdown table, or
 * with --json the measurements as JSON (what `npm run bench:gate` reads).
 * CTXFOLD_BENCH_SLOWDOWN=batch:N (see bench/lib.ts) runs the 2-worker compaction N times and
 * reports the total time, to prove the gate trips on "batch: 2 workers / 1 worker".
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { makeInput } from "./batch-input.js";
import { kSlowdownEnv, parseSlowdown, rewriteDocSection } from "./lib.js";

const kCli = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/**
 * The floor of a JSONL transform, in one process: read the file in 1 MiB blocks, split on
 * newlines with Buffer#indexOf, JSON.parse and JSON.stringify each line, write the lines out in
 * 1 MiB blocks. Seconds.
 */
function baseline(input: string, output: string): number {
  const t = performance.now();
  const inFd = openSync(input, "r");
  const outFd = openSync(output, "w");
  let block = Buffer.alloc(1 << 20);
  let held = 0;
  const pending: string[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pending.length > 0) writeSync(outFd, pending.join(""));
    pending.length = 0;
    pendingBytes = 0;
  };
  for (;;) {
    if (held === block.length) {
      const bigger = Buffer.alloc(block.length * 2);
      block.copy(bigger, 0, 0, held);
      block = bigger;
    }
    const n = readSync(inFd, block, held, block.length - held, null);
    const end = held + n;
    let start = 0;
    for (let nl = block.indexOf(0x0a, start); nl >= 0 && nl < end; nl = block.indexOf(0x0a, start)) {
      if (nl > start) {
        const line = JSON.stringify(JSON.parse(block.toString("utf8", start, nl))) + "\n";
        pending.push(line);
        pendingBytes += line.length;
        if (pendingBytes >= 1 << 20) flush();
      }
      start = nl + 1;
    }
    if (n === 0) {
      if (start < end) pending.push(JSON.stringify(JSON.parse(block.toString("utf8", start, end))) + "\n");
      break;
    }
    block.copy(block, 0, start, end);
    held = end - start;
  }
  flush();
  closeSync(inFd);
  closeSync(outFd);
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
  const r = spawnSync(process.execPath, [kCli, "compact", input, "-o", out, "--budget", String(budget), "--workers", String(workers), "--json", "--quiet"], {
    encoding: "utf8",
    maxBuffer: 1 << 26,
  });
  const wall = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`ctxfold compact exited ${r.status}: ${r.stderr}`);
  const s = JSON.parse(r.stdout) as Run;
  rmSync(out, { force: true });
  rmSync(`${out}.offload`, { recursive: true, force: true });
  return { ...s, seconds: wall };
}

/** Baseline, 1 worker and 2 workers over one input: seconds and the runs' counts. */
function passes(dir: string, input: string, budget: number): { base: number; one: Run; two: Run } {
  const base = baseline(input, path.join(dir, "base.jsonl"));
  rmSync(path.join(dir, "base.jsonl"));
  const one = ctxfold(dir, input, 1, budget);
  const two = ctxfold(dir, input, 2, budget);
  const slowdown = parseSlowdown(process.env[kSlowdownEnv])
    .filter((s) => s.target === "batch")
    .reduce((n, s) => n * s.factor, 1);
  for (let i = 1; i < slowdown; i++) two.seconds += ctxfold(dir, input, 2, budget).seconds;
  return { base, one, two };
}

async function main(): Promise<void> {
  const mb = arg("mb", 200);
  const rssGb = arg("rss-gb", 1);
  const budget = arg("budget", 8000);
  const once = !process.argv.includes("--no-corpus-once");
  const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-bench-batch-"));
  try {
    const input = path.join(dir, "in.jsonl");
    const { source, bytes } = makeInput(input, mb);
    const unique = passes(dir, input, budget);
    let corpus: { bytes: number; base: number; one: Run; two: Run } | undefined;
    if (once) {
      const corpusInput = path.join(dir, "once.jsonl");
      const corpusBytes = makeInput(corpusInput, 0).bytes;
      corpus = { bytes: corpusBytes, ...passes(dir, corpusInput, budget) };
      rmSync(corpusInput);
    }
    let big: Run | undefined;
    let bigBytes = 0;
    if (rssGb > 0) {
      const bigInput = path.join(dir, "big.jsonl");
      rmSync(input);
      bigBytes = makeInput(bigInput, rssGb * 1000).bytes;
      big = ctxfold(dir, bigInput, 2, budget);
    }
    const cpu = cpus()[0]?.model ?? "unknown CPU";
    const rows = (label: string, n: number, p: { base: number; one: Run; two: Run }, targets: boolean) => [
      `| ${label} | baseline: read, split, JSON.parse + JSON.stringify per line, write | ${(n / 1e6 / p.base).toFixed(1)} | 1.00x | | | |`,
      `| ${label} | ctxfold compact --workers 1 (in-process) | ${(n / 1e6 / p.one.seconds).toFixed(1)} | ${(p.base / p.one.seconds).toFixed(2)}x | 1.00x | ${p.one.peakRssMB} MB | ${targets ? "≥ 1.0x baseline" : ""} |`,
      `| ${label} | ctxfold compact --workers 2 (pool) | ${(n / 1e6 / p.two.seconds).toFixed(1)} | ${(p.base / p.two.seconds).toFixed(2)}x | ${(p.one.seconds / p.two.seconds).toFixed(2)}x | ${p.two.peakRssMB} MB | ${targets ? "≥ 1.6x 1 worker" : ""} |`,
    ];
    const md = [
      `${source} made unique (each copy after the first salted in every text, so no memo, cache or stored original of one copy serves another), ${(bytes / 1e6).toFixed(0)} MB (${unique.one.runs.toLocaleString("en-US")} runs, ${unique.one.compacted.toLocaleString("en-US")} compacted at budget ${budget.toLocaleString("en-US")})${corpus ? `; and the ${source} once, ${(corpus.bytes / 1e6).toFixed(0)} MB` : ""}. ${availableParallelism()} cores (${cpu}), ${new Date().toISOString().slice(0, 10)}.`,
      "",
      "| input | pass over the same lines | MB/s | vs baseline | vs 1 worker | peak RSS | target |",
      "|---|---|---:|---:|---:|---:|---|",
      ...rows(`unique, ${(bytes / 1e6).toFixed(0)} MB`, bytes, unique, true),
      ...(corpus ? rows(`${source} once`, corpus.bytes, corpus, false) : []),
      ...(big
        ? [
            `| unique, ${(bigBytes / 1e9).toFixed(2)} GB | ctxfold compact --workers 2 | ${(bigBytes / 1e6 / big.seconds).toFixed(1)} | | | ${big.peakRssMB} MB (${((big.peakRssMB / unique.two.peakRssMB - 1) * 100).toFixed(0)}% vs ${(bytes / 1e6).toFixed(0)} MB) | ≤ 300 MB, within 10% |`,
          ]
        : []),
    ].join("\n");
    if (process.argv.includes("--docs")) rewriteDocSection("batch", md);
    const json = {
      source,
      bytes,
      budget,
      cores: availableParallelism(),
      cpu,
      baselineSeconds: unique.base,
      workers1: unique.one,
      workers2: unique.two,
      corpusOnce: corpus ?? null,
      big: big ? { bytes: bigBytes, ...big } : null,
    };
    process.stdout.write(process.argv.includes("--json") ? JSON.stringify(json, null, 2) + "\n" : md + "\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:batch: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
