/**
 * `ctxfold eval IN… --budget 8000,32000 [--config FILE] [--compare FILE] [--against langchain,…]
 * [--points N] [--runs N] [--trace N|ID,…] [--format F] [--fail-under metric=value,…]
 * [--pricing anthropic|openai|read=R,write=W] [--misses] [--json] [-o OUT | --html FILE] [--no-report] [--quiet]`: replays each run
 * of the input files (one pooled set) prompt by prompt through ctxfold, the tail baseline (what a careful hand-written trimmer
 * does) and the peers named, at each budget, and reports the metrics of src/eval per budget,
 * pooled and per source group (src/eval/sources.ts: a run id's part before the first "/"), with
 * the worst source of each metric.
 * --pricing sets the prices of the cost metric (cachePricedCost; default anthropic).
 *
 * Report files (eval-report.ts): the HTML report and the JSON summary beside it, OUT.html and
 * OUT.json (-o OUT, default ctxfold-eval in the current directory; --html FILE names the HTML
 * file), named in one line on stderr at the end; --no-report writes none.
 *
 * Input: any format the adapters read (detected per run, or --format), converted to OpenAI Chat
 * messages for measuring. A line that is not JSON, not a run, or fails its format's schema is
 * counted and listed by id (or line) and left out; runs the compactor refuses (budget_infeasible)
 * are counted in the metrics and listed by id: neither stops the eval.
 *
 * Exit: 0; 1 when a --fail-under threshold is missed (one line each on stderr naming the metric,
 * the budget, the value and the threshold), the input cannot be read or a report file cannot be
 * written; 2 bad usage, or a report file that is one of the inputs.
 * Progress (runs done, their pace, an ETA, prompts) on stderr, unless --quiet or --json: drawn on
 * a terminal, a plain line now and then elsewhere; --quiet prints no tables and no line naming the
 * report files either (the exit code and the missed thresholds on stderr say it all; the files are
 * still written), and the tables are cut to the terminal's width.
 */
import { basename } from "node:path";
import { renderMessages } from "../../adapters/index.js";
import type { OpenAIChatMessage } from "../../adapters/openai-chat.js";
import { CtxfoldError } from "../../errors.js";
import type { Format } from "../../adapters/index.js";
import {
  describeMisses,
  evaluate,
  kPeers,
  parsePricing,
  parseThresholds,
  readConfigFile,
  type EvalMetrics,
  type EvalReport,
  type EvaluateOptions,
  type FailedRun,
  sourceOf,
} from "../../eval/index.js";
import { spread, type EvalRun } from "../../eval/replay.js";
import { runIdOf } from "../../pool/jsonl.js";
import { formatOption, intOption, kExit, parseCli, shownName, UsageError, type CliIo } from "../common.js";
import { ProgressLine } from "../progress.js";
import { writeAll } from "../../pool/output.js";
import { num, parseRun, readRuns, table } from "../runs.js";
import { budgetsOption } from "./stats.js";
import { renderMisses } from "./eval-misses.js";
import { refuseUnwritableReport, reportJson, reportPaths, writeReport, type ReportPaths } from "./eval-report.js";

const kOptions = {
  budget: { type: "string" },
  config: { type: "string" },
  compare: { type: "string" },
  against: { type: "string" },
  points: { type: "string" },
  runs: { type: "string" },
  trace: { type: "string" },
  format: { type: "string" },
  "fail-under": { type: "string" },
  json: { type: "boolean" },
  output: { type: "string", short: "o" },
  html: { type: "string" },
  "no-report": { type: "boolean" },
  quiet: { type: "boolean" },
  pricing: { type: "string" },
  misses: { type: "boolean" },
} as const;

/**
 * The runs of `file` as OpenAI Chat messages, each with its source group (by the id the line
 * gives it: a run without one is "unnamed"), and the lines that could not be used (naming the
 * file when `named`, as when the eval reads several).
 */
export async function readEvalRuns(
  file: string,
  io: CliIo,
  format?: ReturnType<typeof formatOption>,
  named = false,
): Promise<{ runs: EvalRun[]; failed: FailedRun[] }> {
  const runs: EvalRun[] = [];
  const failed: FailedRun[] = [];
  for await (const item of readRuns(file, io)) {
    try {
      if (item.error) throw item.error;
      const parsed = parseRun(item.run, shownName(file), item.line, format);
      const source = sourceOf(item.run.envelope ? runIdOf(item.run.envelope) : undefined);
      runs.push({ id: item.run.id, messages: renderMessages(parsed.messages, "openai-chat") as OpenAIChatMessage[], source });
    } catch (err) {
      if (!CtxfoldError.isInstance(err)) throw err;
      const id = item.run ? runIdOf(item.run.envelope ?? {}) : undefined;
      failed.push({ ...(id !== undefined ? { id } : {}), ...(named ? { file: shownName(file) } : {}), line: item.line, code: err.code, reason: err.message });
    }
  }
  return { runs, failed };
}

/** The runs of every file, in order, as one pooled set (readEvalRuns). */
async function readAllEvalRuns(files: readonly string[], io: CliIo, format: Format | undefined): Promise<{ runs: EvalRun[]; failed: FailedRun[] }> {
  const runs: EvalRun[] = [];
  const failed: FailedRun[] = [];
  for (const file of files) {
    const read = await readEvalRuns(file, io, format, files.length > 1);
    runs.push(...read.runs);
    failed.push(...read.failed);
  }
  return { runs, failed };
}

/** evaluate's options the command line sets (all but the input's name and the progress). */
type EvaluateFlags = Omit<EvaluateOptions, "input" | "onProgress">;

/** What the command line asks for: the runs to read, what to evaluate of them, and what to print. */
interface EvalFlags {
  files: string[];
  /** At most this many runs, spread over the input (spread). */
  limit: number | undefined;
  format: Format | undefined;
  evaluate: EvaluateFlags;
  json: boolean;
  quiet: boolean;
  /** Where the report files go (none with --no-report). */
  report: ReportPaths | undefined;
  /** The files read: the inputs, --config and --compare (a report file must be none of them). */
  read: string[];
}

export async function evalCommand(argv: string[], io: CliIo): Promise<number> {
  const flags = evalFlags(argv);
  if (flags.report) refuseUnwritableReport(flags.report, flags.read, io.stdin);
  const { runs: all, failed } = await readAllEvalRuns(flags.files, io, flags.format);
  const runs = spread(all, flags.limit);
  const progress = !flags.quiet && !flags.json ? new ProgressLine(io, undefined, !io.stderrIsTTY) : undefined;
  const input = flags.files.map(shownName).join(", ");
  const report = await evaluate(runs, failed, { input, ...flags.evaluate, ...(progress ? { onProgress: drawProgress(progress) } : {}) });
  progress?.clear();
  // The files before stdout, so a reader that stops early (`| head`) does not cost the report.
  if (flags.report) writeReport(flags.report, report);
  // --quiet leaves the verdict to the exit code and the misses on stderr (and the files written).
  if (flags.json) await writeAll(io.stdout, reportJson(report));
  else if (!flags.quiet) await writeAll(io.stdout, render(report, io.columns));
  const misses = describeMisses(report.thresholds);
  for (const m of misses) io.stderr.write(`ctxfold eval: threshold missed: ${m}\n`);
  if (flags.report && !flags.quiet) io.stderr.write(`ctxfold eval: report ${flags.report.html}, summary ${flags.report.json}\n`);
  return misses.length > 0 ? kExit.failed : kExit.ok;
}

/** The command line's flags, checked in order (a UsageError names what is wrong). */
function evalFlags(argv: string[]): EvalFlags {
  const { values, positionals } = parseCli(argv, kOptions);
  const files = positionals;
  if (files.length === 0) throw new UsageError("eval needs an input file (IN.jsonl[.gz] …, or - for stdin)");
  if (files.filter((f) => f === "-").length > 1) throw new UsageError("stdin (-) can be read once");
  if (values.budget === undefined) throw new UsageError("--budget is required (a comma list, e.g. --budget 8000,32000)");
  const budgets = budgetsOption(values.budget as string);
  const points = intOption(values.points as string | undefined, "points", 40);
  if (points < 2) throw new UsageError("--points: at least 2 (consecutive pairs)");
  const limit = values.runs === undefined ? undefined : intOption(values.runs as string, "runs");
  const format = formatOption(values.format as string | undefined);
  const report = reportPaths({ output: values.output as string | undefined, html: values.html as string | undefined, noReport: Boolean(values["no-report"]) });
  const evaluate = { budgets, points, ...contenderFlags(values), ...(values.misses ? { misses: true } : {}) };
  const read = [...files, ...[values.config, values.compare].filter((f): f is string => typeof f === "string")];
  return { files, limit, format, evaluate, json: Boolean(values.json), quiet: Boolean(values.quiet), report, read };
}

/**
 * The contenders and what is asked of them: --against, --fail-under, --pricing, --trace, then
 * --config and --compare (read here, so a bad file stops the eval before any run is read).
 */
function contenderFlags(values: Record<string, string | boolean | undefined>): Omit<EvaluateFlags, "budgets" | "points"> {
  const against = ((values.against as string | undefined) ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknownPeer = against.find((a) => !Object.hasOwn(kPeers, a));
  if (unknownPeer !== undefined) throw new UsageError(`--against: unknown peer ${JSON.stringify(unknownPeer)} (one of ${Object.keys(kPeers).join(", ")})`);
  const thresholds = values["fail-under"] === undefined ? undefined : flagValue(parseThresholds, values["fail-under"] as string);
  const pricing = flagValue(parsePricing, (values.pricing as string | undefined) ?? "anthropic");
  const traceArg = values.trace as string | undefined;
  const trace =
    traceArg === undefined
      ? undefined
      : /^\d+$/.test(traceArg)
        ? Number(traceArg)
        : traceArg
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean);
  const configFile = values.config as string | undefined;
  const compareFile = values.compare as string | undefined;
  const config = configFile ? readConfigFile(configFile) : undefined;
  const compare = compareFile ? { config: readConfigFile(compareFile), name: `ctxfold (${basename(compareFile)})` } : undefined;
  return {
    against,
    pricing,
    ...(config ? { config, configName: `ctxfold (${basename(configFile!)})` } : {}),
    ...(compare ? { compare } : {}),
    ...(trace !== undefined ? { trace } : {}),
    ...(thresholds ? { thresholds } : {}),
  };
}

/** A flag's value as `parse` reads it; its error, whose path is the flag's name, as a UsageError (`--fail-under: …`). */
function flagValue<T>(parse: (value: string) => T, value: string): T {
  try {
    return parse(value);
  } catch (err) {
    throw new UsageError(`--${(err as Error).message}`);
  }
}

/** evaluate's onProgress, drawn on `progress`: runs done, their pace since now, and the prompts replayed. */
function drawProgress(progress: ProgressLine): NonNullable<EvaluateOptions["onProgress"]> {
  const started = performance.now();
  return (done, total, prompts) =>
    progress.draw({ runs: done, elapsedMs: performance.now() - started, doneFraction: done / total, note: `${num(prompts)} prompts` });
}

/** A share as a percentage; two decimals only where one would round a near-miss to 100% (a fill may pass 100%). */
const pctOf = (x: number | null) => (x === null ? "n/a" : x === 1 ? "100%" : `${(x * 100).toFixed(x > 0.9995 && x < 1.0005 ? 2 : 1)}%`);
const fixed = (x: number | null, d = 2) => (x === null ? "n/a" : x.toFixed(d));
const tokensOf = (x: number | null) => (x === null ? "n/a" : num(Math.round(x)));
const named = (name: string, m: EvalMetrics) => (m.errors ? `${name} (${m.errors} errors)` : name);

/** What must hold: the invariants (headers as the --fail-under names, with spaces). */
function invariantRow(name: string, m: EvalMetrics): string[] {
  return [
    named(name, m),
    pctOf(m.withinBudget),
    m.infeasibleWhereCriticalFits ? `${m.infeasible} (${m.infeasibleWhereCriticalFits} fit)` : String(m.infeasible),
    String(m.newViolationPrompts),
    pctOf(m.criticalVerbatim),
    pctOf(m.failedVisible),
    pctOf(m.recoverable),
  ];
}

/** What it is worth: evidence kept, what a call costs, how full and how stable the prompts are, and speed. */
function valueRow(name: string, m: EvalMetrics): string[] {
  return [
    named(name, m),
    pctOf(m.evidenceRecall),
    tokensOf(m.costPerCall),
    pctOf(m.costSavings),
    pctOf(m.budgetFill.p50),
    pctOf(m.budgetFill.p95),
    pctOf(m.compression === null ? null : 1 - m.compression),
    fixed(m.cachePrefix),
    fixed(m.latencyMs.p50, 2),
    fixed(m.latencyMs.p99, 2),
    m.throughput === null ? "n/a" : num(m.throughput),
  ];
}

const kInvariantHeader = ["contender", "within budget", "infeasible", "new violations", "critical verbatim", "failed visible", "recoverable"];
const kValueHeader = [
  "contender",
  "evidence recall",
  "cost/call",
  "cost savings",
  "budget fill",
  "fill p95",
  "savings",
  "cache prefix",
  "p50 ms",
  "p99 ms",
  "prompts/s",
];

/** The human report: two tables per budget (invariants; evidence, cost and speed), then what could not be measured. */
export function render(r: EvalReport, width?: number): string {
  const out: string[] = [
    `${r.input}: ${num(r.corpus.runs)} runs, ${num(r.corpus.prompts)} prompt points (at most ${r.options.points} a run), ${num(r.corpus.pairs)} consecutive pairs`,
  ];
  const p = r.options.pricing;
  if (p)
    out.push(
      `cost/call: mean input-token units per call above the budget at ${p.name} pricing (cached prefix ×${p.read}, the rest ×${p.write}); budget fill: output tokens / budget, p50 (fill p95: 95th percentile); savings: the share of over-budget input tokens removed (--fail-under savings=…)`,
    );
  for (const b of r.budgets) {
    const first = b.rows[0]?.metrics;
    out.push(
      "",
      `budget ${num(b.budget)}: ${first ? `${num(first.overBudget)} prompts over it, ${num(first.prompts - first.criticalFits)} where the critical messages alone do not fit` : ""}`,
    );
    const fit = width ? { width } : {};
    out.push(table([kInvariantHeader, ...b.rows.map(({ contender, metrics }) => invariantRow(contender, metrics))], fit).trimEnd());
    out.push("", table([kValueHeader, ...b.rows.map(({ contender, metrics }) => valueRow(contender, metrics))], fit).trimEnd());
    out.push(...renderSources(r, b.budget, width));
  }
  if (r.misses) out.push(...renderMisses(r.misses, width));
  if (r.notes.length) out.push("", ...r.notes.map((n) => `note: ${n}`));
  if (r.failedRuns.length) {
    out.push("", `${num(r.failedRuns.length)} line${r.failedRuns.length === 1 ? "" : "s"} left out:`);
    for (const f of r.failedRuns.slice(0, 20))
      out.push(`  ${f.file !== undefined ? `${f.file}:` : ""}line ${f.line}${f.id !== undefined ? ` (${f.id})` : ""}: ${f.code}: ${f.reason.split("\n")[0]}`);
    if (r.failedRuns.length > 20) out.push(`  … ${num(r.failedRuns.length - 20)} more (--json lists all)`);
  }
  if (r.infeasibleRuns.length) {
    out.push(
      "",
      `budget infeasible (refused as over the budget) at some prompts of ${num(r.infeasibleRuns.length)} run×budget${r.infeasibleRuns.length === 1 ? "" : "s"}:`,
    );
    out.push(
      `  ${r.infeasibleRuns
        .slice(0, 20)
        .map((x) => `${x.id} @${x.budget} (${x.points})`)
        .join(", ")}${r.infeasibleRuns.length > 20 ? ", …" : ""}`,
    );
  }
  if (r.thresholds.length) {
    out.push("", "thresholds:");
    for (const t of r.thresholds)
      out.push(`  ${t.ok ? "ok  " : "MISS"} ${t.metric} ≥ ${t.threshold} at ${t.budget}: ${t.value === null ? "n/a" : Number(t.value.toFixed(4))}`);
  }
  return out.join("\n") + "\n";
}

/** The per-source table shows at most this many sources (--json has them all). */
const kShownSources = 12;
const kSourceHeader = [
  "source · contender",
  "runs",
  "within budget",
  "new violations",
  "critical verbatim",
  "failed visible",
  "recoverable",
  "evidence recall",
  "cost/call",
  "cost savings",
  "savings",
  "cache prefix",
];

/** A source's row: the invariants and what it is worth, as in the pooled tables. */
function sourceRow(source: string, runs: number, contender: string, m: EvalMetrics): string[] {
  const [, within, , violations, verbatim, visible, recoverable] = invariantRow(contender, m);
  const [, recall, cost, costSavings, , , savings, cache] = valueRow(contender, m);
  return [`${source} · ${named(contender, m)}`, num(runs), within, violations, verbatim, visible, recoverable, recall, cost, costSavings, savings, cache];
}

/** How a worst-source value reads: cost in tokens, the rest as shares. */
const worstValue = (metric: string, value: number) => (metric === "cost_per_call" ? tokensOf(value) : pctOf(value));

/**
 * At one budget, when the input has several sources: a row per source and contender, then the
 * first contender's worst source of each metric where the sources differ (by --fail-under name).
 */
function renderSources(r: EvalReport, budget: number, width?: number): string[] {
  const groups = r.sources?.groups ?? [];
  if (groups.length < 2) return [];
  const b = r.budgets.findIndex((x) => x.budget === budget);
  const out = [""];
  if (groups.length <= kShownSources) {
    const rows = groups.flatMap((g) => g.budgets[b].rows.map(({ contender, metrics }) => sourceRow(g.source, g.runs, contender, metrics)));
    out.push(table([kSourceHeader, ...rows], width ? { width } : {}).trimEnd());
  } else out.push(`  ${num(groups.length)} sources (--json has each one's metrics)`);
  const first = r.budgets[b].rows[0]?.contender;
  const worst = r.sources.worst.filter((w) => w.budget === budget && w.contender === first);
  if (worst.length) out.push(`  worst source (${first}): ${worst.map((w) => `${w.metric} ${w.source} ${worstValue(w.metric, w.value)}`).join(", ")}`);
  return out;
}
