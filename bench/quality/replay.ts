/**
 * `npm run bench:quality [-- --budgets 8000,32000] [--points 40] [--runs N] [--contenders a,b]
 * [--readme] [--json]`: the quality benchmark of issue 6. It replays every dev-corpus run
 * (../shared/corpus/dev.jsonl.gz) prompt by prompt — every index i where messages[i] is an
 * assistant message is a point where the agent called the model with messages[0..i) — through
 * each contender at each budget, and measures what the model would have been sent. Runs with more
 * than --points prompt points are sampled to evenly spaced consecutive pairs (see samplePoints);
 * every contender sees the same points, in order, one run at a time (stateful contenders are
 * reset per run and budget). --runs N takes N runs spread evenly over the corpus (quick checks);
 * --contenders keeps the contenders whose names contain one of the given words.
 *
 * Prints a markdown table per budget, writes bench/results/quality.json; --json prints the JSON
 * instead of the tables; --readme rewrites the README's quality:begin / quality:end section.
 * Metric definitions: bench/quality/metrics.ts and the `definitions` text below.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { openaiChatAdapter } from "../../src/adapters/index.js";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { newViolations, validate, type ValidationResult } from "../../src/validate/index.js";
import { fmt, rewriteReadmeSection } from "../lib.js";
import {
  cachePrefixShare, contentText, criticalCore, criticalVerbatim, failedVisible, isFailedToolResult, kCriticalKinds, percentile, recoverable, samplePoints,
  visibleHead, type CriticalKind,
} from "./metrics.js";
import { kCounter, loadContenders, messageTokens, promptTokens, type CompactOutput, type Contender } from "./peers.js";

const kCorpus = fileURLToPath(new URL("../../../../shared/corpus/dev.jsonl.gz", import.meta.url));
const kResults = fileURLToPath(new URL("../../../bench/results/quality.json", import.meta.url));

interface Options {
  budgets: number[];
  points: number;
  runs?: number;
  contenders?: string[];
  readme: boolean;
  json: boolean;
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
  const budgets = (value("--budgets") ?? "8000,32000").split(",").filter(Boolean).map((b) => int("--budgets", b, 1));
  if (budgets.length === 0) throw new Error("--budgets takes a comma list of token budgets");
  const points = int("--points", value("--points") ?? "40", 2);
  const r = value("--runs");
  const c = value("--contenders");
  return {
    budgets,
    points,
    runs: r === undefined ? undefined : int("--runs", r, 1),
    contenders: c === undefined ? undefined : c.split(",").filter(Boolean),
    readme: argv.includes("--readme"),
    json: argv.includes("--json"),
  };
}

/** Freezes a parsed run so that a contender mutating its input throws instead of skewing later measurements. */
function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

interface Run {
  id: string;
  messages: OpenAIChatMessage[];
}

function loadRuns(limit?: number): Run[] {
  const lines = gunzipSync(readFileSync(kCorpus)).toString("utf8").split("\n").filter(Boolean);
  const pick = limit === undefined || limit >= lines.length ? lines : Array.from({ length: limit }, (_, k) => lines[Math.floor((k * lines.length) / limit)]);
  return pick.map((l) => {
    const r = JSON.parse(l) as { id: string; messages: OpenAIChatMessage[] };
    return { id: r.id, messages: deepFreeze(r.messages) };
  });
}

/** One prompt point of a run, with what every contender's measurement shares. */
interface Point {
  runId: string;
  input: OpenAIChatMessage[];
  withPrev: boolean;
  tokens: number;
  criticalTokens: number;
  validation: ValidationResult;
  failed: { message: OpenAIChatMessage; head: string }[];
}

function preparePoints(run: Run, max: number): Point[] {
  const at: number[] = [];
  run.messages.forEach((m, i) => {
    if (m.role === "assistant" && i > 0) at.push(i);
  });
  return samplePoints(at.length, max).map(({ point, withPrev }) => {
    const input = run.messages.slice(0, at[point]);
    return {
      runId: run.id,
      input,
      withPrev,
      tokens: promptTokens(input),
      criticalTokens: promptTokens(criticalCore(input)),
      validation: validate(openaiChatAdapter.parse(input, { source: run.id }), "openai-chat"),
      failed: input.filter(isFailedToolResult).map((message) => ({ message, head: visibleHead(contentText(message)) })),
    };
  });
}

/** What one contender scored at one budget. */
class Tally {
  prompts = 0;
  errors = 0;
  errorSamples: string[] = [];
  /** Where a refusal came although the critical messages fit (run id and prompt index), for follow-up. */
  refusalSamples: string[] = [];
  /** Failed results not visible in an output, for follow-up. */
  failedMissSamples: string[] = [];
  overBudget = 0;
  criticalFits = 0;
  withinWhereCriticalFits = 0;
  feasible = 0;
  withinOfFeasible = 0;
  infeasible = 0;
  infeasibleWhereCriticalFits = 0;
  violationPrompts = 0;
  violationCodes: Record<string, number> = {};
  warningCodes: Record<string, number> = {};
  criticalAll = 0;
  criticalKinds = Object.fromEntries(kCriticalKinds.map((k) => [k, { verbatim: 0, of: 0 }])) as Record<CriticalKind, { verbatim: number; of: number }>;
  failed = 0;
  failedVisible = 0;
  recover?: { affectedBytes: number; recoveredBytes: number; refs: number; refsResolved: number };
  compression: number[] = [];
  cache: number[] = [];
  cacheOverBudget: number[] = [];
  latencyMs: number[] = [];
  outputTokens: number[] = [];
  anomalies: Record<string, number> = {};
}

const sameArray = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Counts a prompt point: every call, also one that threw (which then scores as not within budget). */
function countPoint(t: Tally, p: Point, budget: number): boolean {
  const fits = p.criticalTokens <= budget;
  t.prompts++;
  if (p.tokens > budget) t.overBudget++;
  if (fits) t.criticalFits++;
  return fits;
}

function measure(t: Tally, p: Point, budget: number, r: CompactOutput): void {
  const fits = countPoint(t, p, budget);
  if (r.anomaly) t.anomalies[r.anomaly] = (t.anomalies[r.anomaly] ?? 0) + 1;
  if (r.infeasible) {
    t.infeasible++;
    if (fits) t.infeasibleWhereCriticalFits++;
    return;
  }
  const out = r.messages;
  const tokens = promptTokens(out);
  t.feasible++;
  t.outputTokens.push(tokens);
  if (tokens <= budget) {
    t.withinOfFeasible++;
    if (fits) t.withinWhereCriticalFits++;
  }
  if (p.tokens > budget) t.compression.push(tokens / p.tokens);
  // Provider rules: only what the output breaks that the input did not.
  if (!sameArray(out, p.input)) {
    let issues;
    try {
      issues = newViolations(p.validation, validate(openaiChatAdapter.parse(out), "openai-chat"));
    } catch (e) {
      issues = [{ code: "UNPARSABLE", severity: "error", message: (e as Error).message }];
    }
    let errors = 0;
    for (const i of issues) {
      const bucket = i.severity === "error" ? t.violationCodes : t.warningCodes;
      bucket[i.code] = (bucket[i.code] ?? 0) + 1;
      if (i.severity === "error") errors++;
    }
    if (errors > 0) t.violationPrompts++;
  }
  const critical = criticalVerbatim(p.input, out);
  let all = true;
  for (const [kind, ok] of Object.entries(critical) as [CriticalKind, boolean][]) {
    t.criticalKinds[kind].of++;
    if (ok) t.criticalKinds[kind].verbatim++;
    else all = false;
  }
  if (all) t.criticalAll++;
  for (const f of p.failed) {
    t.failed++;
    if (failedVisible(f.message, out, f.head)) t.failedVisible++;
    else if (t.failedMissSamples.length < 5) t.failedMissSamples.push(`${p.runId}@${p.input.length}: ${f.message.role === "tool" ? f.message.tool_call_id : ""} head=${JSON.stringify(f.head.slice(0, 60))}`);
  }
  if (r.refs) {
    t.recover ??= { affectedBytes: 0, recoveredBytes: 0, refs: 0, refsResolved: 0 };
    const stored: string[] = [];
    for (const ref of r.refs) {
      t.recover.refs++;
      try {
        stored.push(r.resolve!(ref));
        t.recover.refsResolved++;
      } catch {
        // unresolved: counted by refs - refsResolved
      }
    }
    const { affected, recovered } = recoverable(p.input, out, stored);
    t.recover.affectedBytes += affected;
    t.recover.recoveredBytes += recovered;
  }
}

const kPrefixCounter = { message: messageTokens, text: (s: string) => kCounter.exact(s) };

async function replay(runs: Run[], contenders: Contender[], options: Options): Promise<{ tallies: Map<number, Map<Contender, Tally>>; prompts: number; pairs: number }> {
  const tallies = new Map(options.budgets.map((b) => [b, new Map(contenders.map((c) => [c, new Tally()]))]));
  let prompts = 0;
  let pairs = 0;
  const started = performance.now();
  // Warm-up: each contender's first calls (module loading, JIT) are not measured.
  const warm = preparePoints(runs[0], 3);
  for (const c of contenders) {
    c.startRun?.();
    for (const p of warm) await c.compact(p.input.slice(), options.budgets[0]).catch(() => undefined);
  }
  for (const [n, run] of runs.entries()) {
    const points = preparePoints(run, options.points);
    prompts += points.length;
    pairs += points.filter((p) => p.withPrev).length;
    for (const budget of options.budgets) {
      for (const c of contenders) {
        const t = tallies.get(budget)!.get(c)!;
        c.startRun?.();
        let prev: OpenAIChatMessage[] | undefined;
        for (const p of points) {
          let r: CompactOutput;
          const t0 = performance.now();
          try {
            r = await c.compact(p.input.slice(), budget);
          } catch (e) {
            countPoint(t, p, budget);
            t.errors++;
            if (t.errorSamples.length < 3) t.errorSamples.push(`${run.id}: ${(e as Error).message?.split("\n")[0]}`);
            prev = undefined;
            continue;
          }
          t.latencyMs.push(performance.now() - t0);
          measure(t, p, budget, r);
          if (r.infeasible) {
            if (p.criticalTokens <= budget && t.refusalSamples.length < 10) t.refusalSamples.push(`${run.id}@${p.input.length}`);
            prev = undefined;
            continue;
          }
          if (p.withPrev && prev) {
            const share = cachePrefixShare(prev, r.messages, kPrefixCounter);
            t.cache.push(share);
            if (p.tokens > budget) t.cacheOverBudget.push(share);
          }
          prev = r.messages;
        }
      }
    }
    if ((n + 1) % 10 === 0 || n + 1 === runs.length) process.stderr.write(`  ${n + 1}/${runs.length} runs, ${prompts} prompts, ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  }
  return { tallies, prompts, pairs };
}

// ---------------------------------------------------------------------------------------------
// Report.

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
const share = (a: number, b: number) => (b === 0 ? null : a / b);
function pct(x: number | null): string {
  if (x === null || Number.isNaN(x)) return "n/a";
  if (x === 1) return "100%";
  const p = x * 100;
  return `${p >= 99.95 ? p.toFixed(2) : p.toFixed(1)}%`;
}
const two = (x: number) => (Number.isNaN(x) ? "n/a" : x.toFixed(2));

function summary(t: Tally) {
  return {
    prompts: t.prompts,
    errors: t.errors,
    errorSamples: t.errorSamples,
    refusalSamples: t.refusalSamples,
    failedMissSamples: t.failedMissSamples,
    overBudget: t.overBudget,
    criticalFits: t.criticalFits,
    withinBudgetWhereCriticalFits: share(t.withinWhereCriticalFits, t.criticalFits),
    withinBudgetOfFeasible: share(t.withinOfFeasible, t.feasible),
    infeasible: t.infeasible,
    infeasibleWhereCriticalFits: t.infeasibleWhereCriticalFits,
    newViolationPrompts: t.violationPrompts,
    newViolationCodes: t.violationCodes,
    newWarningCodes: t.warningCodes,
    criticalVerbatim: share(t.criticalAll, t.feasible),
    criticalVerbatimByKind: Object.fromEntries(kCriticalKinds.map((k) => [k, share(t.criticalKinds[k].verbatim, t.criticalKinds[k].of)])),
    failedResults: t.failed,
    failedVisible: share(t.failedVisible, t.failed),
    recoverable: t.recover ? { ...t.recover, share: t.recover.affectedBytes === 0 ? 1 : t.recover.recoveredBytes / t.recover.affectedBytes } : null,
    compression: mean(t.compression),
    cachePrefix: mean(t.cache),
    cachePrefixPairs: t.cache.length,
    cachePrefixOverBudget: mean(t.cacheOverBudget),
    cachePrefixOverBudgetPairs: t.cacheOverBudget.length,
    latencyMs: { p50: percentile(t.latencyMs, 50), p99: percentile(t.latencyMs, 99), calls: t.latencyMs.length },
    outputTokensMean: mean(t.outputTokens),
    anomalies: t.anomalies,
  };
}
type Summary = ReturnType<typeof summary>;

function table(budget: number, rows: [Contender, Summary][]): string {
  const first = rows[0][1];
  const out = [
    `**Budget ${budget.toLocaleString("en-US")} tokens**: ${first.prompts} prompts, ${first.overBudget} over the budget, ${first.prompts - first.criticalFits} where the critical messages alone do not fit.`,
    "",
    "| contender | within budget | infeasible | new violations | critical verbatim | failed visible | recoverable | compression | cache prefix | cache prefix, over budget | p50 ms | p99 ms |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const [c, s] of rows) {
    const infeasible = s.infeasibleWhereCriticalFits > 0 ? `${s.infeasible} (${s.infeasibleWhereCriticalFits} fit)` : String(s.infeasible);
    const violations = s.newViolationPrompts === 0 ? "0" : `${s.newViolationPrompts} (${pct(s.newViolationPrompts / Math.max(1, s.prompts - s.infeasible - s.errors))})`;
    const rec = s.recoverable ? pct(s.recoverable.share) + (s.recoverable.refsResolved < s.recoverable.refs ? `, ${s.recoverable.refs - s.recoverable.refsResolved} refs unresolved` : "") : "n/a";
    const name = s.errors > 0 ? `${c.name} (${s.errors} errors)` : c.name;
    out.push(
      `| ${name} | ${pct(s.withinBudgetWhereCriticalFits)} | ${infeasible} | ${violations} | ${pct(s.criticalVerbatim)} | ${pct(s.failedVisible)} | ${rec} | ${two(s.compression)} | ${two(s.cachePrefix)} | ${two(s.cachePrefixOverBudget)} | ${fmt(s.latencyMs.p50)} | ${fmt(s.latencyMs.p99)} |`,
    );
  }
  const remarks = rows.flatMap(([c, s]) => [
    ...Object.entries(s.anomalies).map(([what, n]) => `- ${c.name}: ${what} at ${n} prompts.`),
    ...(s.errors > 0 ? [`- ${c.name}: ${s.errors} calls threw (${s.errorSamples.join("; ")}).`] : []),
  ]);
  if (remarks.length) out.push("", ...remarks);
  return out.join("\n");
}

const kDefinitions = [
  "Within budget: share of the prompts whose critical messages fit that got an output of at most the budget, in exact o200k tokens with OpenAI's message overheads (`TokenCounter.countMessages(…, \"exact\")`: 3 per message, 3 per tool call, 3 per request; a typed refusal counts as not within).",
  "Critical messages: every system message, the first user message (the task), the latest user message and the latest assistant message with text; they fit when those messages' texts, plus the tool calls of a critical assistant message and the results answering them (which provider rules require with it), with their overheads, fit the budget. Verbatim: each one's whole text is inside some output message of the same role; the column is the share of outputs that keep all of them.",
  "Infeasible: the contender's typed refusal (ctxfold's `budget_infeasible`, Mastra's TripWire); \"(n fit)\" counts refusals where the critical messages did fit. New violations: outputs with an error-severity provider-rule issue (`validate(…, \"openai-chat\")`) that the input did not have (`newViolations`).",
  "Failed visible: tool results that failed (error text or non-zero exit code) whose answer is still in the output whole, or whose error head or tool_call_id appears in some output text. Recoverable: UTF-8 bytes of the input texts no output text contains any more that the contender's refs give back (peers keep no refs: n/a).",
  "Compression: mean output tokens / input tokens over the prompts above the budget. Cache prefix: mean, over consecutive prompt points of a run, of the tokens of the longest common prefix of the two outputs (equal messages, then the common start of the first differing one) over the tokens of the later output; \"over budget\" keeps the pairs whose later input is above the budget. Latency: per call, conversion to and from the peer's message type included.",
];

function markdown(budgets: number[], results: Map<number, [Contender, Summary][]>, contenders: Contender[], notes: string[], runs: number, prompts: number, pairs: number, options: Options): string {
  const machine = `${cpus().length} × ${cpus()[0]?.model.split(" ").slice(0, 2).join(" ") ?? "?"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const out = [
    `Dev corpus, ${runs} runs, ${prompts} prompt points (at most ${options.points} a run, as consecutive pairs; ${pairs} consecutive pairs), ${new Date().toISOString().slice(0, 10)}, ${machine}.`,
    "",
  ];
  for (const b of budgets) out.push(table(b, results.get(b)!), "");
  out.push("Contenders:", "");
  for (const c of contenders) out.push(`- **${c.name}** (${c.version}): ${c.note}.`);
  for (const n of notes) out.push(`- ${n}.`);
  out.push("");
  for (const d of kDefinitions) out.push(d, "");
  return out.join("\n").trimEnd();
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  if (!existsSync(kCorpus)) {
    process.stdout.write(`bench:quality skipped: ${kCorpus} is absent (needs ../shared beside the checkout)\n`);
    return;
  }
  const runs = loadRuns(options.runs);
  const { contenders, notes } = await loadContenders(options.contenders);
  for (const n of notes) process.stderr.write(`  ${n}\n`);
  if (contenders.length === 0) throw new Error("no contender to measure");
  process.stderr.write(`  ${runs.length} runs, budgets ${options.budgets.join(", ")}, contenders: ${contenders.map((c) => c.name).join(", ")}\n`);
  const { tallies, prompts, pairs } = await replay(runs, contenders, options);
  const results = new Map(options.budgets.map((b) => [b, contenders.map((c) => [c, summary(tallies.get(b)!.get(c)!)] as [Contender, Summary])]));
  const json = {
    date: new Date().toISOString(),
    node: process.version,
    options: { budgets: options.budgets, points: options.points, runs: options.runs ?? null, contenders: options.contenders ?? null },
    corpus: { runs: runs.length, prompts, pairs },
    contenders: contenders.map((c) => ({ name: c.name, version: c.version, note: c.note })),
    notes,
    budgets: Object.fromEntries(options.budgets.map((b) => [b, Object.fromEntries(results.get(b)!.map(([c, s]) => [c.name, s]))])),
  };
  mkdirSync(dirname(kResults), { recursive: true });
  writeFileSync(kResults, JSON.stringify(json, null, 2) + "\n");
  const md = markdown(options.budgets, results, contenders, notes, runs.length, prompts, pairs, options);
  if (options.readme) rewriteReadmeSection("quality", md);
  process.stdout.write(options.json ? JSON.stringify(json, null, 2) + "\n" : md + "\n");
}

await main();
