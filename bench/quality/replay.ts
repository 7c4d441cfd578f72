/**
 * `npm run bench:quality [-- --budgets 8000,32000] [--points 40] [--runs N] [--contenders a,b]
 * [--pricing anthropic|openai|read=R,write=W] [--docs] [--json]`: the quality benchmark. It replays every corpus run
 * (every *.jsonl.gz of ../shared/corpus, pooled) prompt by prompt — every index i where messages[i] is an
 * assistant message is a point where the agent called the model with messages[0..i) — through
 * each contender at each budget, and measures what the model would have been sent. Runs with more
 * than --points prompt points are sampled to evenly spaced consecutive pairs (see samplePoints);
 * every contender sees the same points, in order, one run at a time (stateful contenders are
 * reset per run and budget). --runs N takes N runs spread evenly over the corpus (quick checks);
 * --contenders keeps the contenders whose names contain one of the given words; --pricing sets
 * the prices of the cost metric (as `ctxfold eval --pricing`; default anthropic). Besides the
 * peers it measures two baselines: "no compaction" and the "tail baseline" (what a careful
 * hand-written trimmer does, src/eval/tail-baseline.ts).
 *
 * Prints a markdown table per budget, pooled, and one per source group (a run id's part before the
 * first "/", src/eval/sources.ts) with the worst source of each metric named; writes
 * bench/results/quality.json (with a `sources` section); --json prints the JSON
 * instead of the tables; --docs rewrites the quality:begin / quality:end section.
 * The replay and the metrics are `ctxfold eval`'s (src/eval/replay.ts, src/eval/metrics.ts); this
 * script adds the peers and the benchmarks page's table (docs/benchmarks.md). Definitions: the `definitions` text below.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { loadContenders, type Contender } from "../../src/eval/contenders.js";
import { replayRuns } from "../../src/eval/replay.js";
import { sourcesReport, type SourcesReport } from "../../src/eval/sources.js";
import type { EvalMetrics } from "../../src/eval/types.js";
import { parsePricing, type Pricing } from "../../src/eval/metrics.js";
import { fmt, rewriteDocSection } from "../lib.js";
import { corpusFiles, kCorpusDir, loadRuns } from "./corpus.js";

const kResults = fileURLToPath(new URL("../../../bench/results/quality.json", import.meta.url));

interface Options {
  budgets: number[];
  points: number;
  runs?: number;
  contenders?: string[];
  pricing: Pricing;
  docs: boolean;
  json: boolean;
}

function pricingOption(spec: string): Pricing {
  try {
    return parsePricing(spec);
  } catch (err) {
    throw new Error(`--${(err as Error).message}`); // the error's path is "pricing"
  }
}

function parseArgs(argv: string[]): Options {
  const value = (flag: string) => {
    const at = argv.indexOf(flag);
    if (at < 0) return undefined;
    const v = argv[at + 1];
    if (v === undefined || v.startsWith("--")) throw new Error(`${flag} needs a value`);
    return v;
  };
  const int = (flag: string, v: string, min: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`${flag} takes an integer ≥ ${min}; got ${JSON.stringify(v)}`);
    return n;
  };
  const budgets = (value("--budgets") ?? "8000,32000")
    .split(",")
    .filter(Boolean)
    .map((b) => int("--budgets", b, 1));
  if (budgets.length === 0) throw new Error("--budgets takes a comma list of token budgets");
  const points = int("--points", value("--points") ?? "40", 2);
  const r = value("--runs");
  const c = value("--contenders");
  return {
    budgets,
    points,
    runs: r === undefined ? undefined : int("--runs", r, 1),
    contenders: c === undefined ? undefined : c.split(",").filter(Boolean),
    pricing: pricingOption(value("--pricing") ?? "anthropic"),
    docs: argv.includes("--docs"),
    json: argv.includes("--json"),
  };
}

// ---------------------------------------------------------------------------------------------
// Report.

const nan = (x: number | null) => (x === null ? Number.NaN : x);
function pct(x: number | null): string {
  if (x === null || Number.isNaN(x)) return "n/a";
  if (x === 1) return "100%";
  const p = x * 100;
  // Two decimals only where one would round a near-miss to 100% (a fill may pass 100%).
  return `${p >= 99.95 && p < 100.05 ? p.toFixed(2) : p.toFixed(1)}%`;
}
const two = (x: number | null) => (x === null || Number.isNaN(x) ? "n/a" : x.toFixed(2));
const tokens = (x: number | null) => (x === null || Number.isNaN(x) ? "n/a" : Math.round(x).toLocaleString("en-US"));

function table(budget: number, rows: [Contender, EvalMetrics][]): string {
  const first = rows[0][1];
  const out = [
    `**Budget ${budget.toLocaleString("en-US")} tokens**: ${first.prompts} prompts, ${first.overBudget} over the budget, ${first.prompts - first.criticalFits} where the critical messages alone do not fit.`,
    "",
    "| contender | within budget | infeasible | new violations | critical verbatim | failed visible | recoverable | evidence recall | cost/call | cost savings | budget fill | fill p95 | compression | cache prefix | cache prefix, over budget | p50 ms | p99 ms |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const [c, s] of rows) {
    const infeasible = s.infeasibleWhereCriticalFits > 0 ? `${s.infeasible} (${s.infeasibleWhereCriticalFits} fit)` : String(s.infeasible);
    const violations =
      s.newViolationPrompts === 0 ? "0" : `${s.newViolationPrompts} (${pct(s.newViolationPrompts / Math.max(1, s.prompts - s.infeasible - s.errors))})`;
    const rec = s.recoverable !== null ? pct(s.recoverable) + (s.refs && s.refs.unresolved > 0 ? `, ${s.refs.unresolved} refs unresolved` : "") : "n/a";
    const name = s.errors > 0 ? `${c.name} (${s.errors} errors)` : c.name;
    out.push(
      `| ${name} | ${pct(s.withinBudget)} | ${infeasible} | ${violations} | ${pct(s.criticalVerbatim)} | ${pct(s.failedVisible)} | ${rec} | ${pct(s.evidenceRecall)} | ${tokens(s.costPerCall)} | ${pct(s.costSavings)} | ${pct(s.budgetFill.p50)} | ${pct(s.budgetFill.p95)} | ${two(s.compression)} | ${two(s.cachePrefix)} | ${two(s.cachePrefixOverBudget)} | ${fmt(nan(s.latencyMs.p50))} | ${fmt(nan(s.latencyMs.p99))} |`,
    );
  }
  const remarks = rows.flatMap(([c, s]) => [
    ...Object.entries(s.anomalies).map(([what, n]) => `- ${c.name}: ${what} at ${n} prompts.`),
    ...(s.errors > 0 ? [`- ${c.name}: ${s.errors} calls threw (${s.errorSamples.join("; ")}).`] : []),
  ]);
  if (remarks.length) out.push("", ...remarks);
  return out.join("\n");
}

/** A budget's per-source rows (source · contender) and, under them, each contender's worst sources. */
function sourceTable(budget: number, sources: SourcesReport): string {
  const out = [
    `Per source at ${budget.toLocaleString("en-US")} tokens:`,
    "",
    "| source · contender | runs | within budget | new violations | critical verbatim | failed visible | recoverable | evidence recall | cost/call | cost savings | compression | cache prefix |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const g of sources.groups) {
    const b = g.budgets.find((x) => x.budget === budget)!;
    for (const { contender, metrics: s } of b.rows)
      out.push(
        `| ${g.source} · ${contender} | ${g.runs} | ${pct(s.withinBudget)} | ${s.newViolationPrompts} | ${pct(s.criticalVerbatim)} | ${pct(s.failedVisible)} | ${pct(s.recoverable)} | ${pct(s.evidenceRecall)} | ${tokens(s.costPerCall)} | ${pct(s.costSavings)} | ${two(s.compression)} | ${two(s.cachePrefix)} |`,
      );
  }
  const worst = sources.worst.filter((w) => w.budget === budget);
  const contenders = [...new Set(worst.map((w) => w.contender))];
  if (contenders.length) out.push("", "Worst source (where the sources differ):", "");
  for (const c of contenders)
    out.push(
      `- ${c}: ${worst
        .filter((w) => w.contender === c)
        .map((w) => `${w.metric} ${w.source} (${w.metric === "cost_per_call" ? tokens(w.value) : pct(w.value)})`)
        .join(", ")}.`,
    );
  return out.join("\n");
}

const definitions = (pricing: Pricing) => [
  'Within budget: share of the prompts whose critical messages fit that got an output of at most the budget, in exact o200k tokens with OpenAI\'s message overheads (`TokenCounter.countMessages(…, "exact")`: 3 per message, 3 per tool call, 3 per request; a typed refusal counts as not within).',
  "Critical messages: every system message, the first user message (the task), the latest user message and the latest assistant message with text; they fit when those messages' texts, plus the tool calls of a critical assistant message and the results answering them (which provider rules require with it), with their overheads, fit the budget. Verbatim: each one's whole text is inside some output message of the same role; the column is the share of outputs that keep all of them.",
  'Infeasible: the contender\'s typed refusal (ctxfold\'s `budget_infeasible`, Mastra\'s TripWire); "(n fit)" counts refusals where the critical messages did fit. New violations: outputs with an error-severity provider-rule issue (`validate(…, "openai-chat")`) that the input did not have (`newViolations`).',
  "Failed visible: tool results that failed (error text or non-zero exit code) whose answer is still in the output whole, or whose error head or tool_call_id appears in some output text. Recoverable: UTF-8 bytes of the input texts no output text contains any more that the contender's refs give back (peers keep no refs: n/a).",
  'Compression: mean output tokens / input tokens over the prompts above the budget. Cache prefix: mean, over consecutive prompt points of a run, of the tokens of the longest common prefix of the two outputs (equal messages, then the common start of the first differing one) over the tokens of the later output; "over budget" keeps the pairs whose later input is above the budget. Latency: per call, conversion to and from the peer\'s message type included.',
  "Evidence recall (next-step evidence recall, src/eval/evidence.ts): at each prompt point above the budget, the specific terms (paths, identifiers, symbols, error names, flags, numbers of 3+ characters; src/model/terms.ts) the agent's next message names in its text or its tool-call arguments (JSON arguments by their string values), that some prompt message other than the system messages and the task contains and none of those does: what the next step took from the trajectory. The column is the share of them some output message still contains as a whole term (refs count only for what their own characters spell), pooled over all such terms.",
  `Cost/call: mean cache-priced input cost of a call whose input is above the budget, over consecutive prompt points of a run, in input-token units: the tokens of the common prefix with the previous call's output (as for the cache prefix) at the cached-read price, the rest of the output's tokens at the write price; here ${pricing.name} pricing, cached ×${pricing.read}, the rest ×${pricing.write}. Cost savings: 1 − the summed cost of those calls over what their uncompacted inputs would cost at the write price (no caching, no compaction). Budget fill: output tokens / budget over the prompts above the budget, median and 95th percentile (nearest rank).`,
];

function markdown(
  budgets: number[],
  results: Map<number, [Contender, EvalMetrics][]>,
  sources: SourcesReport,
  contenders: Contender[],
  notes: string[],
  runs: number,
  prompts: number,
  pairs: number,
  options: Options,
): string {
  const machine = `${cpus().length} × ${cpus()[0]?.model.split(" ").slice(0, 2).join(" ") ?? "?"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const out = [
    `Corpus (${corpusFiles()
      .map((f) => f.slice(kCorpusDir.length))
      .join(
        ", ",
      )}), ${runs} runs, ${prompts} prompt points (at most ${options.points} a run, as consecutive pairs; ${pairs} consecutive pairs), ${new Date().toISOString().slice(0, 10)}, ${machine}.`,
    "",
  ];
  for (const b of budgets) out.push(table(b, results.get(b)!), "");
  if (sources.groups.length > 1) for (const b of budgets) out.push(sourceTable(b, sources), "");
  out.push("Contenders:", "");
  for (const c of contenders) out.push(`- **${c.name}** (${c.version}): ${c.note}.`);
  for (const n of notes) out.push(`- ${n}.`);
  out.push("");
  for (const d of definitions(options.pricing)) out.push(d, "");
  return out.join("\n").trimEnd();
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  if (corpusFiles().length === 0) {
    process.stdout.write(`bench:quality skipped: no corpus in ${kCorpusDir} (needs ../shared beside the checkout)\n`);
    return;
  }
  const runs = loadRuns(options.runs);
  const { contenders, notes } = await loadContenders(options.contenders);
  for (const n of notes) process.stderr.write(`  ${n}\n`);
  if (contenders.length === 0) throw new Error("no contender to measure");
  process.stderr.write(`  ${runs.length} runs, budgets ${options.budgets.join(", ")}, contenders: ${contenders.map((c) => c.name).join(", ")}\n`);
  const started = performance.now();
  const replay = await replayRuns(runs, contenders, {
    budgets: options.budgets,
    points: options.points,
    pricing: options.pricing,
    onProgress: (done, total, n) => {
      if (done % 10 === 0 || done === total)
        process.stderr.write(`  ${done}/${total} runs, ${n} prompts, ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
    },
  });
  const { metrics, prompts, pairs } = replay;
  const results = new Map(options.budgets.map((b) => [b, contenders.map((c) => [c, metrics.get(b)!.get(c)!] as [Contender, EvalMetrics])]));
  const sources = sourcesReport(replay.sources, options.budgets, contenders);
  const json = {
    date: new Date().toISOString(),
    node: process.version,
    options: { budgets: options.budgets, points: options.points, runs: options.runs ?? null, contenders: options.contenders ?? null, pricing: options.pricing },
    corpus: { runs: runs.length, prompts, pairs },
    contenders: contenders.map((c) => ({ name: c.name, version: c.version, note: c.note })),
    notes,
    budgets: Object.fromEntries(options.budgets.map((b) => [b, Object.fromEntries(results.get(b)!.map(([c, s]) => [c.name, s]))])),
    sources,
  };
  mkdirSync(dirname(kResults), { recursive: true });
  writeFileSync(kResults, JSON.stringify(json, null, 2) + "\n");
  const md = markdown(options.budgets, results, sources, contenders, notes, runs.length, prompts, pairs, options);
  if (options.docs) rewriteDocSection("quality", md);
  process.stdout.write(options.json ? JSON.stringify(json, null, 2) + "\n" : md + "\n");
}

await main();
