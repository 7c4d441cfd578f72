/**
 * Golden outputs of the default path: what `ctxfold compact` writes for every run (each output
 * line, and the stored bytes its refs reach) and what `ctxfold eval --json` reports, recorded
 * once and compared after any change that must not change behaviour (a restructuring, a speed-up).
 *
 *   npm run golden                 compare with bench/golden/outputs.json (exit 1 on a difference)
 *   npm run golden -- --record     record them anew
 *   npm run golden -- --quick      only the quick sample (what the test suite runs)
 *
 * Two inputs: the dev corpus (../shared/corpus, OpenAI chat messages) at budgets 2,000, 8,000 and
 * 32,000, and generated runs rendered in all five provider formats at 2,000 and 8,000, so every
 * adapter's parse and render are covered. Digests only are kept (no corpus text enters the repo):
 * per run, the SHA-256 of its output line and of the refs it reaches with their bytes; per
 * budget, the errors file and the summary without its timings; eval's JSON without its timings.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { renderMessages, type Format } from "../src/adapters/index.js";
import { generateRuns } from "../src/gen/run.js";
import { createPackStore, reachableRefs } from "../src/store/index.js";

const kHere = path.dirname(fileURLToPath(import.meta.url));
/** The repository: this file runs compiled (dist/scripts) or from source (scripts, under the tests). */
const kRoot = path.resolve(kHere, path.basename(path.dirname(kHere)) === "dist" ? "../.." : "..");
const kCli = path.join(kRoot, "dist/src/cli/main.js");
export const kGoldenFile = path.join(kRoot, "bench/golden/outputs.json");
export const kCorpusFile = path.resolve(kRoot, "../shared/corpus/dev.jsonl.gz");
const kCorpusBudgets = [2000, 8000, 32000];
const kGeneratedBudgets = [2000, 8000];
const kFormats: Format[] = ["openai-chat", "anthropic", "openai-responses", "ai-sdk", "langchain"];
/** The quick sample: every this-many-th run of each input. */
const kQuickStride = 12;

/** One input's digests at one budget. */
export interface BudgetDigest {
  /** Run key (line number and id) → `sha256(output line):sha256(reached refs and their bytes)`, 16 hex each. */
  runs: Record<string, string>;
  errors: string;
  summary: string;
}

export interface Golden {
  corpus: Record<string, BudgetDigest>;
  generated: Record<string, BudgetDigest>;
  /** sha256 of eval's JSON over the corpus at the corpus budgets, timings removed. */
  eval: string;
  /** eval's metrics per budget (readable, to see what moved when the digest differs). */
  evalMetrics: Record<string, unknown>;
  /** The same for the quick sample. */
  quickEval: string;
}

const sha = (data: string | Uint8Array, n = 16) => createHash("sha256").update(data).digest("hex").slice(0, n);

/** The corpus's lines, or undefined where ../shared is absent. */
export function corpusLines(): string[] | undefined {
  if (!existsSync(kCorpusFile)) return undefined;
  return gunzipSync(readFileSync(kCorpusFile)).toString("utf8").split("\n").filter(Boolean);
}

/** Generated runs in all five formats, as bare arrays and as objects with other fields. */
export function generatedLines(): string[] {
  return generateRuns(100, 17).map((r, i) => {
    const m = renderMessages(r.messages, kFormats[i % kFormats.length]);
    const env = Array.isArray(m) ? { messages: m } : (m as object);
    return JSON.stringify(i % 3 ? { id: `gen-${i}`, ...env } : m);
  });
}

export const quickSample = (lines: string[]) => lines.filter((_, i) => i % kQuickStride === 0);
const keyOf = (line: string, i: number) => {
  const id = (/^\{"id":"([^"]*)"/.exec(line) ?? [])[1];
  return id ? `${i}:${id}` : String(i);
};

function cli(args: string[], cwd: string): string {
  const r = spawnSync(process.execPath, [kCli, ...args], { cwd, maxBuffer: 1 << 30, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ctxfold ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** Removes what differs between identical runs: dates, the Node version, timings, throughput. */
function withoutTimings(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimings);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (/^(date|node|input|latencyMs|throughput|seconds|peakRssMB|errorsFile|checkpoint|offloadDir)$|Ms$|ms$/.test(k)) continue;
    out[k] = withoutTimings(v);
  }
  return out;
}

/** `ctxfold compact` of `lines` at `budget`, digested run by run. `keys` name the runs (their place in the whole input). */
export function compactDigest(lines: string[], budget: number, keys: string[]): BudgetDigest {
  const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-golden-"));
  try {
    writeFileSync(path.join(dir, "in.jsonl"), lines.join("\n") + "\n");
    const summary = cli(
      ["compact", "in.jsonl", "-o", "out.jsonl", "--budget", String(budget), "--offload-dir", "store", "--workers", "1", "--json", "--quiet"],
      dir,
    );
    const out = readFileSync(path.join(dir, "out.jsonl"), "utf8").split("\n").filter(Boolean);
    if (out.length !== lines.length) throw new Error(`${out.length} output lines for ${lines.length} runs`);
    const store = createPackStore({ dir: path.join(dir, "store") });
    const runs: Record<string, string> = {};
    out.forEach((line, i) => {
      const h = createHash("sha256");
      for (const ref of [...reachableRefs(store, [line])].sort()) {
        h.update(`${ref}\0`);
        h.update(store.has(ref) ? store.get(ref) : "(missing)");
        h.update("\0");
      }
      runs[keys[i]] = `${sha(line)}:${h.digest("hex").slice(0, 16)}`;
    });
    const errorsFile = path.join(dir, "out.jsonl.errors.jsonl");
    const errors = existsSync(errorsFile) ? sha(readFileSync(errorsFile)) : "none";
    return { runs, errors, summary: sha(JSON.stringify(withoutTimings(JSON.parse(summary)))) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `ctxfold eval --json` of `lines` at the corpus budgets, without timings. */
export function evalDigest(lines: string[]): { digest: string; metrics: Record<string, unknown> } {
  const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-golden-"));
  try {
    writeFileSync(path.join(dir, "in.jsonl"), lines.join("\n") + "\n");
    const report = withoutTimings(JSON.parse(cli(["eval", "in.jsonl", "--budget", kCorpusBudgets.join(","), "--json", "--quiet"], dir))) as {
      budgets: { budget: number; rows: { contender: string; metrics: unknown }[] }[];
    };
    const metrics: Record<string, unknown> = {};
    for (const b of report.budgets) for (const r of b.rows) metrics[`${r.contender}@${b.budget}`] = r.metrics;
    return { digest: sha(JSON.stringify(report)), metrics };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Digests of one input at its budgets: all runs, or the quick sample's. */
function inputDigests(lines: string[], budgets: number[], quick: boolean): Record<string, BudgetDigest> {
  const keys = lines.map(keyOf);
  const picked = quick ? quickSample(lines) : lines;
  const pickedKeys = quick ? quickSample(keys) : keys;
  return Object.fromEntries(budgets.map((b) => [String(b), compactDigest(picked, b, pickedKeys)]));
}

/** Everything the golden file holds (the quick sample's run digests only, with `quick`). */
export function measureGolden(quick: boolean): Golden {
  const corpus = corpusLines();
  if (!corpus) throw new Error(`the dev corpus is not at ${kCorpusFile}`);
  const full = quick ? undefined : evalDigest(corpus);
  return {
    corpus: inputDigests(corpus, kCorpusBudgets, quick),
    generated: inputDigests(generatedLines(), kGeneratedBudgets, quick),
    eval: full?.digest ?? "",
    evalMetrics: full?.metrics ?? {},
    quickEval: evalDigest(quickSample(corpus)).digest,
  };
}

/** Differences between a measurement and the recorded golden outputs, one line each (empty: identical). */
export function compareGolden(now: Golden, recorded: Golden, quick: boolean): string[] {
  const diffs: string[] = [];
  for (const input of ["corpus", "generated"] as const) {
    for (const [budget, d] of Object.entries(now[input])) {
      const r = recorded[input][budget];
      if (!r) {
        diffs.push(`${input} @${budget}: not recorded`);
        continue;
      }
      const changed = Object.entries(d.runs)
        .filter(([k, v]) => r.runs[k] !== v)
        .map(([k]) => k);
      if (changed.length > 0)
        diffs.push(
          `${input} @${budget}: ${changed.length} of ${Object.keys(d.runs).length} runs differ (${changed.slice(0, 5).join(", ")}${changed.length > 5 ? ", …" : ""})`,
        );
      if (!quick && d.errors !== r.errors) diffs.push(`${input} @${budget}: the errors file differs`);
      if (!quick && d.summary !== r.summary) diffs.push(`${input} @${budget}: the summary differs`);
    }
  }
  if (now.quickEval !== recorded.quickEval) diffs.push("eval of the quick sample differs");
  if (!quick && now.eval !== recorded.eval) {
    diffs.push("eval of the corpus differs");
    for (const [k, v] of Object.entries(now.evalMetrics)) {
      const was = recorded.evalMetrics[k] as Record<string, unknown> | undefined;
      for (const [m, x] of Object.entries(v as Record<string, unknown>)) {
        if (JSON.stringify(was?.[m]) !== JSON.stringify(x)) diffs.push(`  ${k} ${m}: ${JSON.stringify(was?.[m])} → ${JSON.stringify(x)}`);
      }
    }
  }
  return diffs;
}

function main(): void {
  const args = new Set(process.argv.slice(2));
  const quick = args.has("--quick");
  const t0 = Date.now();
  const now = measureGolden(quick && !args.has("--record"));
  if (args.has("--record")) {
    writeFileSync(kGoldenFile, JSON.stringify(now, null, 1) + "\n");
    console.log(`recorded ${kGoldenFile} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    return;
  }
  const recorded = JSON.parse(readFileSync(kGoldenFile, "utf8")) as Golden;
  const diffs = compareGolden(now, recorded, quick);
  const count = (g: Record<string, BudgetDigest>) => Object.values(g).reduce((n, d) => n + Object.keys(d.runs).length, 0);
  const what = `${count(now.corpus)} corpus and ${count(now.generated)} generated run outputs with their stored bytes, ${quick ? "eval of the quick sample" : "eval of the corpus and of the quick sample"}`;
  if (diffs.length === 0) {
    console.log(`golden outputs byte-identical: ${what} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    return;
  }
  console.log(`golden outputs differ (${what}):\n${diffs.join("\n")}`);
  process.exitCode = 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) main();
