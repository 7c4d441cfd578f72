/**
 * The self-contained HTML report of `ctxfold eval --html` (issue 8): one document a reader opens
 * from disk, mails or attaches to a CI run, and that looks the same offline ten years later.
 *
 * What it shows: the header (date, Node, input, options, corpus), the --fail-under checks, the
 * notes, the runs the eval could not use and those the first contender refused, the contenders; per budget the metric table (a row
 * per contender, a column per metric; shares as percentages, null as "n/a", latency in ms,
 * compression as an output/input ratio; a cell whose --fail-under check failed is highlighted)
 * with the samples behind it folded away; per traced run × budget a line plot of the tokens of
 * every replayed prompt point before (input) and after compaction (output), the budget line, a
 * vertical marker where a call started a new epoch, and below it what each epoch removed (stages,
 * tokens before → after, refs in a collapsible list).
 *
 * Choices:
 * - No external resource of any kind: inline CSS, system fonts, no images, and a
 *   Content-Security-Policy of `default-src 'none'` so that even a browser that found a URL in
 *   the page would not fetch it. The plots are inline SVG drawn here, in TypeScript, not by a
 *   chart library: the page renders without JavaScript, and this file imports nothing but the
 *   report's types.
 * - Every text from the data (run ids, refs, notes, contender names, error samples…) goes through
 *   `esc`, in text and in attributes alike; ids of elements are made from indexes, never from
 *   data. Numbers that reach SVG coordinates go through `coord`, so a non-finite value can never
 *   print NaN or Infinity; non-finite metric values print as "n/a".
 * - The y axis runs from 0 to the largest of the budget and every token count of the trace,
 *   exactly (not rounded up to a nice number): a budget equal to the largest count is drawn on the
 *   top edge of the plot area, and the ticks are the nice values below it. The x axis is the prompt
 *   point index (0-based, as TraceEpoch.atPoint). A point without an output (the call refused or
 *   threw) breaks the output line into pieces and is marked by a cross on the x axis; an output
 *   point with no neighbour, and a trace of one point, are drawn as dots.
 * - Stable hooks for tests and scripts: `table.metrics[data-budget]`, `svg.trace[data-run]
 *   [data-budget][data-contender]`, `rect.plot-area`, `polyline.tokens-in`, `polyline.tokens-out`,
 *   `line.budget`, `line.epoch[data-point]`, `path.out-missing`, `ol.epochs > li[data-epoch]`,
 *   `table.thresholds`, `td.threshold-fail`. The legend's swatches have their own classes
 *   (`key-tokens-in`…), so a selector of the plot's elements never counts them.
 * - One small inline script (the only one) measures, on load, what the browser laid out: per
 *   `svg.trace` the bounding boxes of its lines and the budget line's height in the plot area, per
 *   metric table the rows with a non-zero height. It writes them, as URI-encoded JSON, into
 *   `<pre id="render-check" hidden>`, which a headless browser's --dump-dom shows
 *   (test/eval/html.test.ts asserts the page renders, not only parses). It reads the DOM and
 *   writes that one element; without JavaScript the report is the same.
 */
import type { EvalMetrics, EvalReport, FailedRun, ThresholdResult, TracePoint, TraceRun } from "./types.js";

/** The text `s` safe in HTML text and in a quoted attribute value. */
function esc(s: unknown): string {
  return String(s ?? "").replace(/[&<>"']/g, (c) => kEntities[c]);
}
const kEntities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** A coordinate for an SVG attribute: one decimal, 0 for anything non-finite. */
function coord(v: number): string {
  if (!isNum(v)) return "0";
  const r = Math.round(v * 10) / 10;
  return String(r === 0 ? 0 : r);
}

/** An integer with thousands separators ("n/a" when not a finite number). */
function int(v: number | null | undefined): string {
  return isNum(v) ? Math.round(v).toLocaleString("en-US") : "n/a";
}
/** A share as a percentage with one decimal, more when one would round a miss to 100% or a hit to 0%. */
function share(v: number | null | undefined): string {
  if (!isNum(v)) return "n/a";
  const p = v * 100;
  let digits = 1;
  while (digits < 4 && ((p < 100 && Number(p.toFixed(digits)) >= 100) || (p > 0 && Number(p.toFixed(digits)) <= 0))) digits++;
  return `${p.toFixed(digits)}%`;
}
/** A number for a data-* attribute ("" when not finite). */
const attrNum = (v: number): string => (isNum(v) ? String(v) : "");
function ratio(v: number | null | undefined): string {
  return isNum(v) ? `${v.toFixed(v < 0.1 ? 3 : 2)}×` : "n/a";
}
/** Two decimals below 10, one below 100, else a whole number with separators; `unit` after it. */
const magnitude = (unit: string) => (v: number | null | undefined): string =>
  isNum(v) ? `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString("en-US")}${unit}` : "n/a";
const ms = magnitude(" ms");
const perSecond = magnitude("/s");
/** A tick label: 500 → "500", 2,500 → "2.5k", 1,200,000 → "1.2M". */
function compact(v: number): string {
  const trim = (x: number) => String(Math.round(x * 100) / 100);
  if (Math.abs(v) >= 1e6) return `${trim(v / 1e6)}M`;
  if (Math.abs(v) >= 1e3) return `${trim(v / 1e3)}k`;
  return Math.round(v * 100) % 100 === 0 ? int(v) : trim(v);
}

// ---------------------------------------------------------------------------------------------
// Metric tables

type Format = (v: number | null | undefined) => string;

interface Column {
  /** The EvalMetrics key (a dotted path for latency), matched against ThresholdResult.metric. */
  key: string;
  label: string;
  help: string;
  kind: "count" | "share" | "ratio" | "ms" | "rate";
  get(m: EvalMetrics): number | null | undefined;
}

const kFormats: Record<Column["kind"], Format> = { count: int, share, ratio, ms, rate: perSecond };

const kColumns: Column[] = [
  { key: "prompts", label: "prompts", kind: "count", help: "Prompt points replayed (every call, also one that threw).", get: (m) => m.prompts },
  { key: "overBudget", label: "over budget", kind: "count", help: "Points whose input was above the budget.", get: (m) => m.overBudget },
  { key: "criticalFits", label: "critical fits", kind: "count", help: "Points whose critical messages alone fit the budget.", get: (m) => m.criticalFits },
  { key: "withinBudget", label: "within budget", kind: "share", help: "Share of the points whose critical messages fit that got an output within the budget (exact o200k).", get: (m) => m.withinBudget },
  { key: "infeasible", label: "infeasible", kind: "count", help: "Typed refusals (ctxfold's budget_infeasible).", get: (m) => m.infeasible },
  { key: "infeasibleWhereCriticalFits", label: "infeasible, critical fits", kind: "count", help: "Refusals where the critical messages did fit.", get: (m) => m.infeasibleWhereCriticalFits },
  { key: "errors", label: "errors", kind: "count", help: "Calls that threw.", get: (m) => m.errors },
  { key: "newViolationPrompts", label: "new violations", kind: "count", help: "Points whose output has an error-severity provider-rule issue the input did not have.", get: (m) => m.newViolationPrompts },
  { key: "violationFree", label: "violation-free", kind: "share", help: "Share of the points (with an output) whose output holds no new error-severity violation.", get: (m) => m.violationFree },
  { key: "criticalVerbatim", label: "critical verbatim", kind: "share", help: "Share of outputs keeping every critical message verbatim.", get: (m) => m.criticalVerbatim },
  { key: "failedResults", label: "failed results", kind: "count", help: "Failed tool results in the inputs.", get: (m) => m.failedResults },
  { key: "failedVisible", label: "failed visible", kind: "share", help: "Share of failed tool results still visible (their answer, error head or call id).", get: (m) => m.failedVisible },
  { key: "recoverable", label: "recoverable", kind: "share", help: "Share of removed or shortened input bytes the contender's refs give back; n/a when it keeps no refs.", get: (m) => m.recoverable },
  { key: "refs.total", label: "refs", kind: "count", help: "Refs the contender returned over all points; n/a when it keeps no refs.", get: (m) => m.refs?.total },
  { key: "refs.unresolved", label: "unresolved refs", kind: "count", help: "Refs returned that did not resolve; n/a when the contender keeps no refs.", get: (m) => m.refs?.unresolved },
  { key: "compression", label: "compression", kind: "ratio", help: "Mean output tokens / input tokens over the points above the budget (lower is more compression).", get: (m) => m.compression },
  { key: "cachePrefix", label: "cache prefix", kind: "share", help: "Mean cache-prefix share of consecutive outputs, over all pairs.", get: (m) => m.cachePrefix },
  { key: "cachePrefixOverBudget", label: "cache prefix, over budget", kind: "share", help: "Mean cache-prefix share of consecutive outputs, over the pairs above the budget.", get: (m) => m.cachePrefixOverBudget },
  { key: "cachePrefixPairs", label: "pairs", kind: "count", help: "Consecutive output pairs measured for the cache prefix.", get: (m) => m.cachePrefixPairs },
  { key: "latencyMs.p50", label: "latency p50", kind: "ms", help: "Median time of one call.", get: (m) => m.latencyMs?.p50 },
  { key: "latencyMs.p99", label: "latency p99", kind: "ms", help: "99th-percentile time of one call.", get: (m) => m.latencyMs?.p99 },
  { key: "throughput", label: "throughput", kind: "rate", help: "Prompt points compacted per second of the contender's own time.", get: (m) => m.throughput },
];

/** "within-budget", "within_budget", "withinBudget", "latency.p50"… → one comparable key. */
const norm = (metric: string) => String(metric).toLowerCase().replace(/[^a-z0-9]/g, "");
const kColumnByName = new Map<string, Column>();
for (const c of kColumns) kColumnByName.set(norm(c.key), c);

/**
 * The column a --fail-under metric is shown in (src/eval/thresholds.ts names them in snake_case:
 * within_budget…), and how its threshold and value print: `savings` is 1 − compression, a share
 * checked against the compression column.
 */
const columnOf = (metric: string): Column | undefined => kColumnByName.get(norm(metric) === "savings" ? "compression" : norm(metric));
const thresholdFormat = (metric: string): Format => {
  const c = columnOf(metric);
  return norm(metric) === "savings" ? share : c ? kFormats[c.kind] : (v) => (isNum(v) ? String(v) : "n/a");
};

function thresholdKey(budget: number, contender: string, column: Column): string {
  return JSON.stringify([budget, contender, column.key]);
}

function renderMetricTable(index: number, budget: number, rows: { contender: string; metrics: EvalMetrics }[], checks: Map<string, ThresholdResult[]>): string {
  const head = kColumns.map((c) => `<th scope="col" title="${esc(c.help)}">${esc(c.label)}</th>`).join("");
  const body = rows.map((row) => {
    const cells = kColumns.map((c) => {
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
    }).join("");
    return `<tr data-contender="${esc(row.contender)}"><th scope="row">${esc(row.contender)}</th>${cells}</tr>`;
  }).join("\n");
  return `<div class="scroll"><table class="metrics" id="metrics-${index}" data-budget="${attrNum(budget)}">
<thead><tr><th scope="col">contender</th>${head}</tr></thead>
<tbody>
${body}
</tbody></table></div>`;
}

/** The samples and breakdowns behind a budget's table, folded away; "" when there are none. */
function renderMetricDetails(rows: { contender: string; metrics: EvalMetrics }[]): string {
  const parts: string[] = [];
  for (const { contender, metrics: m } of rows) {
    if (!m) continue;
    const items: string[] = [];
    const byKind = Object.entries(m.criticalVerbatimByKind ?? {});
    if (byKind.length) items.push(`<dt>critical verbatim by kind</dt><dd>${byKind.map(([k, v]) => `${esc(k)} ${esc(share(v))}`).join(", ")}</dd>`);
    const codes = Object.entries(m.newViolationCodes ?? {});
    if (codes.length) items.push(`<dt>new violation codes</dt><dd>${codes.map(([k, v]) => `<code>${esc(k)}</code> ×${esc(int(v))}`).join(", ")}</dd>`);
    const anomalies = Object.entries(m.anomalies ?? {});
    if (anomalies.length) items.push(`<dt>anomalies the adapter mended (points)</dt><dd>${anomalies.map(([k, v]) => `<code>${esc(k)}</code> ×${esc(int(v))}`).join(", ")}</dd>`);
    if (m.errorSamples?.length) items.push(`<dt>error samples</dt><dd><ul>${m.errorSamples.map((s) => `<li><code>${esc(s)}</code></li>`).join("")}</ul></dd>`);
    if (m.failedMissSamples?.length) items.push(`<dt>failed results not visible (samples)</dt><dd><ul>${m.failedMissSamples.map((s) => `<li><code>${esc(s)}</code></li>`).join("")}</ul></dd>`);
    if (items.length) parts.push(`<h4>${esc(contender)}</h4><dl>${items.join("")}</dl>`);
  }
  return parts.length ? `<details class="metric-details"><summary>Breakdowns and samples</summary>${parts.join("\n")}</details>` : "";
}

function renderThresholds(thresholds: ThresholdResult[]): string {
  if (!thresholds.length) return "";
  const failed = thresholds.filter((t) => !t.ok).length;
  const fmt = (t: ThresholdResult, v: number | null) => thresholdFormat(t.metric)(v);
  const rows = thresholds.map((t) => `<tr class="${t.ok ? "ok" : "fail"}"><td><code>${esc(t.metric)}</code></td><td>${esc(int(t.budget))}</td><td>${esc(t.contender)}</td><td>${esc(fmt(t, t.threshold))}</td><td>${esc(fmt(t, t.value))}</td><td>${t.ok ? "passed" : "FAILED"}</td></tr>`).join("\n");
  return `<section id="thresholds"><h2>--fail-under checks</h2>
<p class="${failed ? "fail" : "ok"}">${failed ? `${failed} of ${thresholds.length} checks failed.` : `All ${thresholds.length} checks passed.`} A null value never passes.</p>
<table class="thresholds"><thead><tr><th>metric</th><th>budget</th><th>contender</th><th>threshold</th><th>value</th><th>result</th></tr></thead>
<tbody>
${rows}
</tbody></table></section>`;
}

function renderFailedRuns(failed: FailedRun[]): string {
  if (!failed.length) return "";
  const rows = failed.map((f) => `<tr><td>${esc(int(f.line))}</td><td>${f.id === undefined ? "" : `<code>${esc(f.id)}</code>`}</td><td><code>${esc(f.code)}</code></td><td>${esc(f.reason)}</td></tr>`).join("\n");
  return `<section id="failed-runs"><h2>Runs the eval could not use (${esc(int(failed.length))})</h2>
<div class="scroll"><table class="failed-runs"><thead><tr><th>line</th><th>id</th><th>code</th><th>reason</th></tr></thead>
<tbody>
${rows}
</tbody></table></div></section>`;
}

function renderInfeasibleRuns(runs: EvalReport["infeasibleRuns"]): string {
  if (!runs.length) return "";
  const rows = runs.map((r) => `<tr><td><code>${esc(r.id)}</code></td><td>${esc(int(r.budget))}</td><td>${esc(int(r.points))}</td></tr>`).join("\n");
  return `<section id="infeasible-runs"><h2>Runs refused at some points (${esc(int(runs.length))})</h2>
<p>The first contender answered budget_infeasible at these points: the run's critical messages alone did not fit, or it refused.</p>
<div class="scroll"><table class="infeasible-runs"><thead><tr><th>run</th><th>budget</th><th>points refused</th></tr></thead>
<tbody>
${rows}
</tbody></table></div></section>`;
}

// ---------------------------------------------------------------------------------------------
// Trace plots

const kPlot = { width: 880, height: 330, left: 64, right: 20, top: 40, bottom: 44 };

/** Nice tick values in [0, max]: steps of 1, 2, 2.5 or 5 × 10^k, about `count` of them. */
function ticks(max: number, count: number, integer: boolean): number[] {
  if (!isNum(max) || max <= 0) return [0];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? 10 * mag;
  if (integer) step = Math.max(1, Math.ceil(step));
  const out: number[] = [];
  for (let i = 0; i * step <= max * (1 + 1e-9) && out.length < 100; i++) out.push(Math.round(i * step * 1e6) / 1e6);
  return out;
}

/** The token value of a point, or null when absent or not a finite number. */
const tok = (v: number | null | undefined): number | null => (isNum(v) ? v : null);

function renderTracePlot(trace: TraceRun, index: number): string {
  const { width: W, height: H, left, right, top, bottom } = kPlot;
  const pw = W - left - right;
  const ph = H - top - bottom;
  const points: TracePoint[] = trace.points ?? [];
  const n = points.length;
  const budget = isNum(trace.budget) && trace.budget > 0 ? trace.budget : null;

  let yMax = budget ?? 0;
  for (const p of points) yMax = Math.max(yMax, tok(p.tokensIn) ?? 0, tok(p.tokensOut) ?? 0);
  if (!(yMax > 0)) yMax = 1;
  const xMax = Math.max(n - 1, 1);
  const x = (i: number) => (n <= 1 ? left + pw / 2 : left + (i / xMax) * pw);
  const y = (v: number) => top + ph - (v / yMax) * ph;
  const pt = (i: number, v: number) => `${coord(x(i))},${coord(y(v))}`;

  const parts: string[] = [];
  parts.push(`<title>${esc(`Tokens per prompt point of run ${trace.runId} at budget ${int(trace.budget)} (${trace.contender})`)}</title>`);
  parts.push(`<rect class="plot-area" x="${coord(left)}" y="${coord(top)}" width="${coord(pw)}" height="${coord(ph)}"/>`);

  // Axes and ticks.
  const grid: string[] = [];
  for (const v of ticks(yMax, 5, true)) {
    const yy = coord(y(v));
    grid.push(`<line class="grid" x1="${coord(left)}" x2="${coord(left + pw)}" y1="${yy}" y2="${yy}"/>`);
    grid.push(`<line class="tick" x1="${coord(left - 5)}" x2="${coord(left)}" y1="${yy}" y2="${yy}"/>`);
    grid.push(`<text class="tick-label y" x="${coord(left - 8)}" y="${yy}" text-anchor="end" dominant-baseline="middle">${esc(compact(v))}</text>`);
  }
  const xTicks = n === 0 ? [] : n === 1 ? [0] : ticks(n - 1, 10, true);
  for (const i of xTicks) {
    const xx = coord(x(i));
    grid.push(`<line class="tick" x1="${xx}" x2="${xx}" y1="${coord(top + ph)}" y2="${coord(top + ph + 5)}"/>`);
    grid.push(`<text class="tick-label x" x="${xx}" y="${coord(top + ph + 18)}" text-anchor="middle">${esc(int(i))}</text>`);
  }
  parts.push(`<g class="axes">${grid.join("")}<line class="axis" x1="${coord(left)}" x2="${coord(left)}" y1="${coord(top)}" y2="${coord(top + ph)}"/><line class="axis" x1="${coord(left)}" x2="${coord(left + pw)}" y1="${coord(top + ph)}" y2="${coord(top + ph)}"/></g>`);
  parts.push(`<text class="axis-label" x="${coord(left + pw / 2)}" y="${coord(H - 6)}" text-anchor="middle">prompt point</text>`);
  parts.push(`<text class="axis-label" transform="translate(14 ${coord(top + ph / 2)}) rotate(-90)" text-anchor="middle">tokens</text>`);

  // Epoch markers, under the lines.
  const epochs: string[] = [];
  points.forEach((p, i) => {
    if (!p.newEpoch) return;
    const xx = coord(x(i));
    epochs.push(`<line class="epoch" data-point="${i}" data-epoch="${esc(int(p.epoch))}" x1="${xx}" x2="${xx}" y1="${coord(top)}" y2="${coord(top + ph)}"><title>${esc(`epoch ${int(p.epoch)} starts at point ${i}`)}</title></line>`);
    epochs.push(`<text class="epoch-label" x="${coord(x(i) + 3)}" y="${coord(top + 11)}">${esc(`e${int(p.epoch)}`)}</text>`);
  });
  if (epochs.length) parts.push(`<g class="epochs">${epochs.join("")}</g>`);

  // Budget line.
  if (budget !== null) {
    const yy = coord(y(budget));
    parts.push(`<line class="budget" x1="${coord(left)}" x2="${coord(left + pw)}" y1="${yy}" y2="${yy}"><title>${esc(`budget ${int(budget)} tokens`)}</title></line>`);
    parts.push(`<text class="budget-label" x="${coord(left + pw - 4)}" y="${coord(y(budget) + 13)}" text-anchor="end">${esc(`budget ${int(budget)}`)}</text>`);
  }

  // Tokens in: one line; a missing value (not a number) breaks it like a missing output.
  const runs = (value: (p: TracePoint) => number | null) => {
    const out: { i: number; v: number }[][] = [];
    let cur: { i: number; v: number }[] = [];
    points.forEach((p, i) => {
      const v = value(p);
      if (v === null) {
        if (cur.length) out.push(cur);
        cur = [];
      } else cur.push({ i, v });
    });
    if (cur.length) out.push(cur);
    return out;
  };
  const series = (cls: string, value: (p: TracePoint) => number | null) => {
    const s: string[] = [];
    for (const seg of runs(value)) {
      if (seg.length === 1) s.push(`<circle class="${cls} dot" cx="${coord(x(seg[0].i))}" cy="${coord(y(seg[0].v))}" r="3"/>`);
      else s.push(`<polyline class="${cls}" points="${seg.map((q) => pt(q.i, q.v)).join(" ")}"/>`);
    }
    return s.join("");
  };
  parts.push(series("tokens-in", (p) => tok(p.tokensIn)));
  parts.push(series("tokens-out", (p) => tok(p.tokensOut)));

  // Points without an output: a cross on the x axis.
  const missing: string[] = [];
  points.forEach((p, i) => {
    if (tok(p.tokensOut) !== null) return;
    const cx = x(i);
    const cy = top + ph;
    missing.push(`<path class="out-missing" data-point="${i}" d="M${coord(cx - 4)},${coord(cy - 4)}L${coord(cx + 4)},${coord(cy + 4)}M${coord(cx - 4)},${coord(cy + 4)}L${coord(cx + 4)},${coord(cy - 4)}"><title>${esc(`point ${i}: no output (refused or threw)`)}</title></path>`);
  });
  if (missing.length) parts.push(`<g class="missing">${missing.join("")}</g>`);

  // Hover targets with the values of each point (only for traces a reader can hover point by point).
  if (n > 0 && n <= 2000) {
    const band = n <= 1 ? pw : pw / (n - 1);
    const hovers = points.map((p, i) => {
      const x0 = Math.max(left, x(i) - band / 2);
      const x1 = Math.min(left + pw, x(i) + band / 2);
      const label = `point ${i}: ${int(p.messages)} messages, in ${int(tok(p.tokensIn))}, out ${tok(p.tokensOut) === null ? "none" : int(p.tokensOut)}, epoch ${int(p.epoch)}${p.newEpoch ? " (new)" : ""}`;
      return `<rect x="${coord(x0)}" y="${coord(top)}" width="${coord(Math.max(0, x1 - x0))}" height="${coord(ph)}"><title>${esc(label)}</title></rect>`;
    });
    parts.push(`<g class="hover">${hovers.join("")}</g>`);
  }

  if (n === 0) parts.push(`<text class="empty" x="${coord(left + pw / 2)}" y="${coord(top + ph / 2)}" text-anchor="middle">no prompt points</text>`);

  // Legend, in the top margin.
  const legend: [string, string][] = [["tokens-in", "tokens in (before)"], ["tokens-out", "tokens out (after compaction)"]];
  if (budget !== null) legend.push(["budget", "budget"]);
  if (epochs.length) legend.push(["epoch", "new epoch"]);
  if (missing.length) legend.push(["out-missing", "no output"]);
  let lx = left;
  const items = legend.map(([cls, label]) => {
    const swatch = cls === "out-missing"
      ? `<path class="key-out-missing" d="M${coord(lx + 5)},${coord(10)}L${coord(lx + 13)},${coord(18)}M${coord(lx + 5)},${coord(18)}L${coord(lx + 13)},${coord(10)}"/>`
      : `<line class="key-${cls}" x1="${coord(lx)}" x2="${coord(lx + 18)}" y1="14" y2="14"/>`;
    const item = `<g class="legend-item">${swatch}<text x="${coord(lx + 23)}" y="14" dominant-baseline="middle">${esc(label)}</text></g>`;
    lx += 23 + label.length * 6.6 + 16;
    return item;
  });
  parts.push(`<g class="legend">${items.join("")}</g>`);

  return `<svg class="trace" id="trace-svg-${index}" data-run="${esc(trace.runId)}" data-budget="${attrNum(trace.budget)}" data-contender="${esc(trace.contender)}" data-points="${n}" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img">
${parts.join("\n")}
</svg>`;
}

function renderEpochList(trace: TraceRun): string {
  const epochs = trace.epochs ?? [];
  if (!epochs.length) return `<p class="no-epochs">No epoch started in this run at this budget.</p>`;
  const items = epochs.map((e) => {
    const saved = isNum(e.tokensBefore) && e.tokensBefore > 0 && isNum(e.tokensAfter) ? ` (−${((1 - e.tokensAfter / e.tokensBefore) * 100).toFixed(1)}%)` : "";
    const stages = (e.stages ?? []).map((s) => `<tr><td><code>${esc(s.name)}</code></td><td>${esc(int(s.candidates))}</td><td>${esc(int(s.compacted))}</td><td>${esc(int(s.tokensBefore))} → ${esc(int(s.tokensAfter))}</td></tr>`).join("");
    const refs = e.refs ?? [];
    const refList = refs.length
      ? `<details class="refs"><summary>${esc(int(refs.length))} ref${refs.length === 1 ? "" : "s"}</summary><ul>${refs.map((r) => `<li><code>${esc(r)}</code></li>`).join("")}</ul></details>`
      : `<p class="no-refs">no refs</p>`;
    return `<li data-epoch="${esc(int(e.epoch))}" data-point="${esc(int(e.atPoint))}"><p><strong>Epoch ${esc(int(e.epoch))}</strong> at point ${esc(int(e.atPoint))}: ${esc(int(e.tokensBefore))} → ${esc(int(e.tokensAfter))} tokens${esc(saved)}</p>
${stages ? `<table class="stages"><thead><tr><th>stage</th><th>candidates</th><th>compacted</th><th>tokens before → after</th></tr></thead><tbody>${stages}</tbody></table>` : `<p class="no-stages">no stage compacted anything</p>`}
${refList}</li>`;
  }).join("\n");
  return `<ol class="epochs">
${items}
</ol>`;
}

function renderTrace(trace: TraceRun, index: number): string {
  const points = trace.points ?? [];
  const missing = points.filter((p) => tok(p.tokensOut) === null).length;
  const maxIn = points.reduce((m, p) => Math.max(m, tok(p.tokensIn) ?? 0), 0);
  const facts = [
    `${int(points.length)} prompt point${points.length === 1 ? "" : "s"}`,
    `max ${int(maxIn)} tokens in`,
    `${int(points.filter((p) => p.newEpoch).length)} new epoch${points.filter((p) => p.newEpoch).length === 1 ? "" : "s"}`,
    ...(missing ? [`${int(missing)} without output`] : []),
  ];
  return `<figure class="trace" id="trace-${index}">
<figcaption><strong>Run <code>${esc(trace.runId)}</code></strong> at budget ${esc(int(trace.budget))} — ${esc(trace.contender)} <span class="facts">(${esc(facts.join(", "))})</span></figcaption>
<div class="scroll">${renderTracePlot(trace, index)}</div>
<h4>Epochs</h4>
${renderEpochList(trace)}
</figure>`;
}

// ---------------------------------------------------------------------------------------------
// The document

/** Measures what the browser laid out and writes it into #render-check (see the doc comment). */
const kRenderCheck = `(function () {
  function box(list) {
    var w = 0, h = 0;
    for (var i = 0; i < list.length; i++) { var b = list[i].getBBox(); w = Math.max(w, b.width); h = Math.max(h, b.height); }
    return { count: list.length, width: w, height: h };
  }
  var out = { traces: [], tables: [] };
  var svgs = document.querySelectorAll("svg.trace");
  for (var i = 0; i < svgs.length; i++) {
    var svg = svgs[i], r = svg.getBoundingClientRect();
    var area = svg.querySelector("rect.plot-area").getBoundingClientRect();
    var budget = svg.querySelector("line.budget"), bb = budget ? budget.getBoundingClientRect() : null;
    var epochs = svg.querySelectorAll("line.epoch"), drawn = 0;
    for (var j = 0; j < epochs.length; j++) if (epochs[j].getBoundingClientRect().height > 0) drawn++;
    out.traces.push({
      run: svg.getAttribute("data-run"), budget: Number(svg.getAttribute("data-budget")),
      width: r.width, height: r.height,
      tokensIn: box(svg.querySelectorAll("polyline.tokens-in")),
      tokensOut: box(svg.querySelectorAll("polyline.tokens-out")),
      epochLines: epochs.length, epochLinesDrawn: drawn,
      budgetLine: bb ? { width: bb.width, fromTop: area.height > 0 ? (bb.top + bb.height / 2 - area.top) / area.height : null } : null
    });
  }
  var tables = document.querySelectorAll("table.metrics");
  for (var k = 0; k < tables.length; k++) {
    var t = tables[k], rows = t.tBodies[0] ? t.tBodies[0].rows : [], laid = 0;
    for (var m = 0; m < rows.length; m++) if (rows[m].getBoundingClientRect().height > 0) laid++;
    out.tables.push({ budget: Number(t.getAttribute("data-budget")), rows: rows.length, rowsLaidOut: laid, width: t.getBoundingClientRect().width });
  }
  document.getElementById("render-check").textContent = encodeURIComponent(JSON.stringify(out));
})();`;

const kStyle = `
:root { color-scheme: light; --in: #5c7cfa; --out: #e8590c; --budget: #c92a2a; --epoch: #7048e8; --muted: #667; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; margin: 0 auto; padding: 16px 24px 48px; max-width: 1400px; color: #1a1a1f; background: #fff; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #dde; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 20px 0 6px; } h4 { font-size: 14px; margin: 12px 0 4px; }
code { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; word-break: break-all; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
.meta dt { color: var(--muted); } .meta dd { margin: 0; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { border: 1px solid #dde; padding: 3px 8px; text-align: left; vertical-align: top; }
thead th { background: #f3f4f8; font-weight: 600; font-size: 12px; }
table.metrics th, table.metrics td { padding: 3px 6px; }
table.metrics td { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.metrics th[scope=row] { white-space: nowrap; }
table.metrics thead th { max-width: 110px; }
td.na { color: var(--muted); } td.warn { background: #fff4e6; color: #b35c00; }
td.threshold-fail { background: #ffe3e3; color: #a51111; font-weight: 700; outline: 2px solid #e03131; outline-offset: -2px; }
td.threshold-ok { background: #ebfbee; }
table.thresholds tr.fail td { background: #ffe3e3; } table.thresholds tr.ok td { background: #ebfbee; }
p.fail { color: #a51111; font-weight: 600; } p.ok { color: #2b8a3e; }
ul.notes li { margin: 2px 0; }
figure.trace { margin: 18px 0 28px; padding: 10px 12px; border: 1px solid #e4e4ee; border-radius: 6px; }
figure.trace figcaption { margin-bottom: 6px; } .facts { color: var(--muted); }
svg.trace { display: block; max-width: 100%; height: auto; font-size: 11px; }
svg.trace rect.plot-area { fill: #fbfbfe; stroke: none; }
svg.trace line.grid { stroke: #e9e9f2; } svg.trace line.axis, svg.trace line.tick { stroke: #889; }
svg.trace text { fill: #445; } svg.trace text.axis-label { fill: var(--muted); font-size: 12px; }
svg.trace .tokens-in, svg.trace .key-tokens-in { fill: none; stroke: var(--in); stroke-width: 1.6; }
svg.trace .tokens-out, svg.trace .key-tokens-out { fill: none; stroke: var(--out); stroke-width: 2; }
svg.trace circle.tokens-in { fill: var(--in); stroke: none; } svg.trace circle.tokens-out { fill: var(--out); stroke: none; }
svg.trace line.budget, svg.trace .key-budget { stroke: var(--budget); stroke-width: 1.5; stroke-dasharray: 6 4; }
svg.trace text.budget-label { fill: var(--budget); }
svg.trace line.epoch, svg.trace .key-epoch { stroke: var(--epoch); stroke-width: 1; stroke-dasharray: 2 3; }
svg.trace text.epoch-label { fill: var(--epoch); font-size: 10px; }
svg.trace path.out-missing, svg.trace .key-out-missing { stroke: var(--budget); stroke-width: 1.6; fill: none; }
svg.trace g.hover rect { fill: transparent; } svg.trace g.hover rect:hover { fill: rgba(100, 100, 160, 0.08); }
svg.trace text.empty { fill: var(--muted); font-size: 14px; }
ol.epochs { padding-left: 22px; } ol.epochs > li { margin: 6px 0 12px; } ol.epochs p { margin: 2px 0; }
table.stages td:nth-child(n+2) { text-align: right; font-variant-numeric: tabular-nums; }
details.refs ul { max-height: 320px; overflow: auto; margin: 4px 0; padding-left: 20px; }
details summary { cursor: pointer; color: #364fc7; }
nav ul { margin: 4px 0; padding-left: 20px; columns: 2; }
@media print { details { display: block; } .scroll { overflow: visible; } }
`;

/** The eval report as one self-contained HTML document (see the doc comment at the top). */
export function renderHtmlReport(report: EvalReport): string {
  const budgets = report.budgets ?? [];
  const traces = report.traces ?? [];
  const thresholds = report.thresholds ?? [];
  const notes = report.notes ?? [];
  const failedRuns = report.failedRuns ?? [];
  const infeasibleRuns = report.infeasibleRuns ?? [];
  const contenders = report.contenders ?? [];
  const opts = report.options ?? ({} as EvalReport["options"]);

  const checks = new Map<string, ThresholdResult[]>();
  for (const t of thresholds) {
    const c = columnOf(t.metric);
    if (!c) continue;
    const key = thresholdKey(t.budget, t.contender, c);
    checks.set(key, [...(checks.get(key) ?? []), t]);
  }

  const meta: [string, string][] = [
    ["date", esc(report.date)],
    ["node", esc(report.node)],
    ["input", `<code>${esc(report.input)}</code>`],
    ["budgets", esc((opts.budgets ?? []).map(int).join(", ") || "none")],
    ["points per run", esc(int(opts.points))],
    ...(opts.config !== undefined ? [["config", `<code>${esc(opts.config)}</code>`] as [string, string]] : []),
    ...(opts.compare !== undefined ? [["compare", `<code>${esc(opts.compare)}</code>`] as [string, string]] : []),
    ["against", esc((opts.against ?? []).join(", ") || "none")],
    ["corpus", esc(`${int(report.corpus?.runs)} runs, ${int(report.corpus?.prompts)} prompt points, ${int(report.corpus?.pairs)} consecutive pairs`)],
  ];

  const nav: string[] = [];
  budgets.forEach((b, i) => nav.push(`<li><a href="#budget-${i}">budget ${esc(int(b.budget))}</a></li>`));
  traces.forEach((t, i) => nav.push(`<li><a href="#trace-${i}">run <code>${esc(t.runId)}</code> at ${esc(int(t.budget))}</a></li>`));

  const sections: string[] = [];
  sections.push(renderThresholds(thresholds));
  if (notes.length) sections.push(`<section id="notes"><h2>Notes</h2><ul class="notes">${notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul></section>`);
  sections.push(renderFailedRuns(failedRuns));
  sections.push(renderInfeasibleRuns(infeasibleRuns));
  if (contenders.length) {
    sections.push(`<section id="contenders"><h2>Contenders</h2><table class="contenders"><thead><tr><th>name</th><th>version</th><th>note</th></tr></thead><tbody>
${contenders.map((c) => `<tr><td>${esc(c.name)}</td><td><code>${esc(c.version)}</code></td><td>${esc(c.note)}</td></tr>`).join("\n")}
</tbody></table></section>`);
  }
  sections.push(`<section id="metrics"><h2>Metrics per budget</h2>${budgets.length ? "" : `<p class="empty">No budget was evaluated.</p>`}
${budgets.map((b, i) => `<section class="budget" id="budget-${i}"><h3>Budget ${esc(int(b.budget))} tokens</h3>
${renderMetricTable(i, b.budget, b.rows ?? [], checks)}
${renderMetricDetails(b.rows ?? [])}</section>`).join("\n")}</section>`);
  sections.push(`<section id="traces"><h2>Traces: tokens per prompt point, before and after compaction</h2>${traces.length ? "" : `<p class="empty">No run was traced.</p>`}
${traces.map(renderTrace).join("\n")}</section>`);

  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="ctxfold eval">
<title>${esc(`ctxfold eval — ${report.date ?? ""}`)}</title>
<style>${kStyle}</style>
</head>
<body>
<header><h1>ctxfold eval</h1>
<dl class="meta">${meta.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join("")}</dl>
${nav.length ? `<nav><ul>${nav.join("")}</ul></nav>` : ""}
</header>
<main>
${sections.filter(Boolean).join("\n")}
</main>
<pre id="render-check" hidden></pre>
<script>${kRenderCheck}</script>
</body>
</html>
`;
}
