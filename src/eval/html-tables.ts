/**
 * The HTML report's tables (html.ts): per budget the metric table (a row per contender, a column
 * per metric, a cell whose --fail-under check failed highlighted) with its samples folded away,
 * the --fail-under checks, and the runs the eval could not use or the first contender refused.
 */
import { attrNum, esc, int, isNum, ms, perSecond, ratio, share } from "./html-format.js";
import type { EvalMetrics, EvalReport, FailedRun, ThresholdResult } from "./types.js";

type Format = (v: number | null | undefined) => string;

interface Column {
  /** The EvalMetrics key (a dotted path for latency), matched against ThresholdResult.metric. */
  key: string;
  label: string;
  help: string;
  kind: "count" | "share" | "ratio" | "ms" | "rate" | "tokens";
  get(m: EvalMetrics): number | null | undefined;
}

export const kFormats: Record<Column["kind"], Format> = { count: int, share, ratio, ms, rate: perSecond, tokens: int };

const kColumns: Column[] = [
  { key: "prompts", label: "prompts", kind: "count", help: "Prompt points replayed (every call, also one that threw).", get: (m) => m.prompts },
  { key: "overBudget", label: "over budget", kind: "count", help: "Points whose input was above the budget.", get: (m) => m.overBudget },
  { key: "criticalFits", label: "critical fits", kind: "count", help: "Points whose critical messages alone fit the budget.", get: (m) => m.criticalFits },
  {
    key: "withinBudget",
    label: "within budget",
    kind: "share",
    help: "Share of the points whose critical messages fit that got an output within the budget (exact o200k).",
    get: (m) => m.withinBudget,
  },
  { key: "infeasible", label: "infeasible", kind: "count", help: "Typed refusals (ctxfold's budget_infeasible).", get: (m) => m.infeasible },
  {
    key: "infeasibleWhereCriticalFits",
    label: "infeasible, critical fits",
    kind: "count",
    help: "Refusals where the critical messages did fit.",
    get: (m) => m.infeasibleWhereCriticalFits,
  },
  { key: "errors", label: "errors", kind: "count", help: "Calls that threw.", get: (m) => m.errors },
  {
    key: "newViolationPrompts",
    label: "new violations",
    kind: "count",
    help: "Points whose output has an error-severity provider-rule issue the input did not have.",
    get: (m) => m.newViolationPrompts,
  },
  {
    key: "violationFree",
    label: "violation-free",
    kind: "share",
    help: "Share of the points (with an output) whose output holds no new error-severity violation.",
    get: (m) => m.violationFree,
  },
  {
    key: "criticalVerbatim",
    label: "critical verbatim",
    kind: "share",
    help: "Share of outputs keeping every critical message verbatim.",
    get: (m) => m.criticalVerbatim,
  },
  { key: "failedResults", label: "failed results", kind: "count", help: "Failed tool results in the inputs.", get: (m) => m.failedResults },
  {
    key: "failedVisible",
    label: "failed visible",
    kind: "share",
    help: "Share of failed tool results still visible (their answer, error head or call id).",
    get: (m) => m.failedVisible,
  },
  {
    key: "recoverable",
    label: "recoverable",
    kind: "share",
    help: "Share of removed or shortened input bytes the contender's refs give back; n/a when it keeps no refs.",
    get: (m) => m.recoverable,
  },
  {
    key: "refs.total",
    label: "refs",
    kind: "count",
    help: "Refs the contender returned over all points; n/a when it keeps no refs.",
    get: (m) => m.refs?.total,
  },
  {
    key: "refs.unresolved",
    label: "unresolved refs",
    kind: "count",
    help: "Refs returned that did not resolve; n/a when the contender keeps no refs.",
    get: (m) => m.refs?.unresolved,
  },
  {
    key: "savings",
    label: "savings",
    kind: "share",
    help: "Share of the input tokens removed, over the points above the budget: 1 − mean output tokens / input tokens (the --fail-under savings; the JSON's compression is its complement).",
    get: (m) => (isNum(m.compression) ? 1 - m.compression : null),
  },
  {
    key: "evidenceRecall",
    label: "evidence recall",
    kind: "share",
    help: "Next-step evidence recall: of the specific terms (paths, identifiers, symbols, values) the agent's next message named that came from the trajectory (not from the system prompt or the task), the share the output still shows in its text, pooled over the points above the budget.",
    get: (m) => m.evidenceRecall,
  },
  {
    key: "evidence.terms",
    label: "evidence terms",
    kind: "count",
    help: "Evidence terms measured (over the points above the budget that have evidence).",
    get: (m) => m.evidence?.terms,
  },
  {
    key: "costPerCall",
    label: "cost per call",
    kind: "tokens",
    help: "Mean cache-priced input cost of a call above the budget, in input-token units: the common prefix with the previous call's output at the cached-read price, the rest at the write price (the report's pricing).",
    get: (m) => m.costPerCall,
  },
  {
    key: "costSavings",
    label: "cost savings",
    kind: "share",
    help: "1 − the summed cost of those calls over what their uncompacted inputs cost at the write price.",
    get: (m) => m.costSavings,
  },
  {
    key: "budgetFill.p50",
    label: "budget fill",
    kind: "share",
    help: "Median output tokens / budget over the points above the budget (the --fail-under budget_fill).",
    get: (m) => m.budgetFill?.p50,
  },
  {
    key: "budgetFill.p95",
    label: "budget fill p95",
    kind: "share",
    help: "95th percentile of output tokens / budget over the points above the budget.",
    get: (m) => m.budgetFill?.p95,
  },
  {
    key: "cachePrefix",
    label: "cache prefix",
    kind: "share",
    help: "Mean cache-prefix share of consecutive outputs, over all pairs.",
    get: (m) => m.cachePrefix,
  },
  {
    key: "cachePrefixOverBudget",
    label: "cache prefix, over budget",
    kind: "share",
    help: "Mean cache-prefix share of consecutive outputs, over the pairs above the budget.",
    get: (m) => m.cachePrefixOverBudget,
  },
  { key: "cachePrefixPairs", label: "pairs", kind: "count", help: "Consecutive output pairs measured for the cache prefix.", get: (m) => m.cachePrefixPairs },
  { key: "latencyMs.p50", label: "latency p50", kind: "ms", help: "Median time of one call.", get: (m) => m.latencyMs?.p50 },
  { key: "latencyMs.p99", label: "latency p99", kind: "ms", help: "99th-percentile time of one call.", get: (m) => m.latencyMs?.p99 },
  { key: "throughput", label: "throughput", kind: "rate", help: "Prompt points compacted per second of the contender's own time.", get: (m) => m.throughput },
];

/** "within-budget", "within_budget", "withinBudget", "latency.p50"… → one comparable key. */
const norm = (metric: string) =>
  String(metric)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");
const kColumnByName = new Map<string, Column>();
for (const c of kColumns) kColumnByName.set(norm(c.key), c);

/**
 * The column a --fail-under metric is shown in (src/eval/thresholds.ts names them in snake_case:
 * within_budget…), and how its threshold and value print: `budget_fill` is the median fill.
 */
const kAliases = new Map([["budgetfill", "budgetfillp50"]]);
export const columnOf = (metric: string): Column | undefined => kColumnByName.get(kAliases.get(norm(metric)) ?? norm(metric));
const thresholdFormat = (metric: string): Format => {
  const c = columnOf(metric);
  return c ? kFormats[c.kind] : (v) => (isNum(v) ? String(v) : "n/a");
};

export function thresholdKey(budget: number, contender: string, column: Column): string {
  return JSON.stringify([budget, contender, column.key]);
}

export function renderMetricTable(
  index: number,
  budget: number,
  rows: { contender: string; metrics: EvalMetrics }[],
  checks: Map<string, ThresholdResult[]>,
): string {
  const head = kColumns.map((c) => `<th scope="col" title="${esc(c.help)}">${esc(c.label)}</th>`).join("");
  const body = rows
    .map((row) => {
      const cells = kColumns
        .map((c) => {
          const value = row.metrics ? c.get(row.metrics) : null;
          const text = kFormats[c.kind](value);
          const classes: string[] = [c.kind];
          if (text === "n/a") classes.push("na");
          if (c.key === "refs.unresolved" && isNum(value) && value > 0) classes.push("warn");
          let title = "";
          const results = checks.get(thresholdKey(budget, row.contender, c));
          if (results?.length) {
            const failed = results.some((r) => !r.ok);
            classes.push(failed ? "threshold-fail" : "threshold-ok");
            title = ` title="${esc(results.map((r) => `--fail-under ${r.metric}=${thresholdFormat(r.metric)(r.threshold)}: ${thresholdFormat(r.metric)(r.value)}, ${r.ok ? "passed" : "FAILED"}`).join("; "))}"`;
          }
          return `<td class="${classes.join(" ")}" data-metric="${esc(c.key)}"${title}>${esc(text)}</td>`;
        })
        .join("");
      return `<tr data-contender="${esc(row.contender)}"><th scope="row">${esc(row.contender)}</th>${cells}</tr>`;
    })
    .join("\n");
  return `<div class="scroll"><table class="metrics" id="metrics-${index}" data-budget="${attrNum(budget)}">
<thead><tr><th scope="col">contender</th>${head}</tr></thead>
<tbody>
${body}
</tbody></table></div>`;
}

/** The samples and breakdowns behind a budget's table, folded away; "" when there are none. */
export function renderMetricDetails(rows: { contender: string; metrics: EvalMetrics }[]): string {
  const parts: string[] = [];
  for (const { contender, metrics: m } of rows) {
    if (!m) continue;
    const items: string[] = [];
    const byKind = Object.entries(m.criticalVerbatimByKind ?? {});
    if (byKind.length) items.push(`<dt>critical verbatim by kind</dt><dd>${byKind.map(([k, v]) => `${esc(k)} ${esc(share(v))}`).join(", ")}</dd>`);
    const codes = Object.entries(m.newViolationCodes ?? {});
    if (codes.length) items.push(`<dt>new violation codes</dt><dd>${codes.map(([k, v]) => `<code>${esc(k)}</code> ×${esc(int(v))}`).join(", ")}</dd>`);
    const anomalies = Object.entries(m.anomalies ?? {});
    if (anomalies.length)
      items.push(`<dt>anomalies the adapter mended (points)</dt><dd>${anomalies.map(([k, v]) => `<code>${esc(k)}</code> ×${esc(int(v))}`).join(", ")}</dd>`);
    if (m.errorSamples?.length) items.push(`<dt>error samples</dt><dd><ul>${m.errorSamples.map((s) => `<li><code>${esc(s)}</code></li>`).join("")}</ul></dd>`);
    if (m.failedMissSamples?.length)
      items.push(
        `<dt>failed results not visible (samples)</dt><dd><ul>${m.failedMissSamples.map((s) => `<li><code>${esc(s)}</code></li>`).join("")}</ul></dd>`,
      );
    if (items.length) parts.push(`<h4>${esc(contender)}</h4><dl>${items.join("")}</dl>`);
  }
  return parts.length ? `<details class="metric-details"><summary>Breakdowns and samples</summary>${parts.join("\n")}</details>` : "";
}

export function renderThresholds(thresholds: ThresholdResult[]): string {
  if (!thresholds.length) return "";
  const failed = thresholds.filter((t) => !t.ok).length;
  const fmt = (t: ThresholdResult, v: number | null) => thresholdFormat(t.metric)(v);
  const rows = thresholds
    .map(
      (t) =>
        `<tr class="${t.ok ? "ok" : "fail"}"><td><code>${esc(t.metric)}</code></td><td>${esc(int(t.budget))}</td><td>${esc(t.contender)}</td><td>${esc(fmt(t, t.threshold))}</td><td>${esc(fmt(t, t.value))}</td><td>${t.ok ? "passed" : "FAILED"}</td></tr>`,
    )
    .join("\n");
  return `<section id="thresholds"><h2>--fail-under checks</h2>
<p class="${failed ? "fail" : "ok"}">${failed ? `${failed} of ${thresholds.length} checks failed.` : `All ${thresholds.length} checks passed.`} A null value never passes.</p>
<table class="thresholds"><thead><tr><th>metric</th><th>budget</th><th>contender</th><th>threshold</th><th>value</th><th>result</th></tr></thead>
<tbody>
${rows}
</tbody></table></section>`;
}

export function renderFailedRuns(failed: FailedRun[]): string {
  if (!failed.length) return "";
  const rows = failed
    .map(
      (f) =>
        `<tr><td>${esc(int(f.line))}</td><td>${f.id === undefined ? "" : `<code>${esc(f.id)}</code>`}</td><td><code>${esc(f.code)}</code></td><td>${esc(f.reason)}</td></tr>`,
    )
    .join("\n");
  return `<section id="failed-runs"><h2>Runs the eval could not use (${esc(int(failed.length))})</h2>
<div class="scroll"><table class="failed-runs"><thead><tr><th>line</th><th>id</th><th>code</th><th>reason</th></tr></thead>
<tbody>
${rows}
</tbody></table></div></section>`;
}

export function renderInfeasibleRuns(runs: EvalReport["infeasibleRuns"]): string {
  if (!runs.length) return "";
  const rows = runs.map((r) => `<tr><td><code>${esc(r.id)}</code></td><td>${esc(int(r.budget))}</td><td>${esc(int(r.points))}</td></tr>`).join("\n");
  return `<section id="infeasible-runs"><h2>Runs refused at some points (${esc(int(runs.length))})</h2>
<p>The first contender answered budget_infeasible at these points: the run's critical messages alone did not fit, or it refused.</p>
<div class="scroll"><table class="infeasible-runs"><thead><tr><th>run</th><th>budget</th><th>points refused</th></tr></thead>
<tbody>
${rows}
</tbody></table></div></section>`;
}
