/**
 * The self-contained HTML report of `ctxfold eval --html`: one document a reader opens
 * from disk, mails or attaches to a CI run, and that looks the same offline ten years later.
 *
 * What it shows: the header (date, Node, input, options, pricing, corpus), the --fail-under
 * checks, the notes, the runs the eval could not use and those the first contender refused, the
 * contenders; the frontier plot (html-frontier.ts: evidence recall against cost per call, one
 * marker per contender × budget); per budget the metric table (a row
 * per contender, a column per metric; shares as percentages, null as "n/a", latency in ms,
 * savings under its --fail-under name; a cell whose --fail-under check failed is highlighted)
 * with the samples behind it folded away; when the input has several sources, per budget a table
 * of the metrics per source with the worst source's cells marked (html-sources.ts); per traced
 * run × budget a line plot of the tokens of every replayed prompt point before (input) and after compaction (output), the budget line, a
 * vertical marker where a call started a new epoch (labelled where the label clears the last one
 * drawn, html-trace.ts: labels never overlap, each point's tooltip names its epoch), and below it
 * every epoch and what it removed: a line whose figures are its stage table's own (stage-rows.ts:
 * from the first row's tokens before to the last row's after, by the compactor's count, with a
 * "finish" row for what the steps after the stages changed) and the prompt's as plotted where they
 * differ, the table (a stage skipped whole reads "not run: …"), the refs in a collapsible list.
 *
 * Choices:
 * - No external resource of any kind: inline CSS, system fonts, no images, and a
 *   Content-Security-Policy of `default-src 'none'` so that even a browser that found a URL in
 *   the page would not fetch it. The plots are inline SVG drawn here, in TypeScript, not by a
 *   chart library: the page renders without JavaScript, and html.ts and the html-*.ts it is made
 *   of (formatting, tables, trace plots) import nothing but each other, the report's types and
 *   the stage rows explain prints too (policy/stage-rows.ts, which imports types only).
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
 *   `line.budget`, `line.epoch[data-point]`, `text.epoch-label[data-point]`, `path.out-missing`,
 *   `ol.epochs > li[data-epoch]`, `table.thresholds`, `td.threshold-fail`, and the frontier
 *   plot's (html-frontier.ts). The
 *   legend's swatches have their own classes (`key-tokens-in`…), so a selector of the plot's
 *   elements never counts them.
 * - One small inline script (the only one) measures, on load, what the browser laid out: per
 *   `svg.trace` the bounding boxes of its lines, the budget line's height in the plot area, and
 *   how many of its epoch labels overlap a neighbour; per metric table the rows with a non-zero
 *   height; for the frontier plot its markers drawn. It
 *   writes them, as URI-encoded JSON, into `<pre id="render-check" hidden>`, which a headless
 *   browser's --dump-dom shows (test/eval/html.test.ts asserts the page renders, not only
 *   parses). It reads the DOM and writes that one element; without JavaScript the report is the
 *   same.
 */
import { esc, int } from "./html-format.js";
import { columnOf, renderFailedRuns, renderInfeasibleRuns, renderMetricDetails, renderMetricTable, renderThresholds, thresholdKey } from "./html-tables.js";
import { renderFrontier, kFrontierStyle } from "./html-frontier.js";
import { renderTrace } from "./html-trace.js";
import { kMissesCss, renderMisses } from "./html-misses.js";
import { renderSources } from "./html-sources.js";
import type { EvalReport, ThresholdResult } from "./types.js";

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
    // Epoch labels as laid out, left to right: how many pairs of neighbours overlap, the least gap between them.
    var labels = svg.querySelectorAll("text.epoch-label"), overlaps = 0, minGap = null, prev = null;
    for (var l = 0; l < labels.length; l++) {
      var lb = labels[l].getBoundingClientRect();
      if (prev) { var gap = lb.left - prev.right; if (gap < 0) overlaps++; minGap = minGap === null ? gap : Math.min(minGap, gap); }
      prev = lb;
    }
    out.traces.push({
      run: svg.getAttribute("data-run"), budget: Number(svg.getAttribute("data-budget")),
      width: r.width, height: r.height,
      tokensIn: box(svg.querySelectorAll("polyline.tokens-in")),
      tokensOut: box(svg.querySelectorAll("polyline.tokens-out")),
      epochLines: epochs.length, epochLinesDrawn: drawn,
      epochLabels: { count: labels.length, overlaps: overlaps, minGap: minGap, right: prev ? prev.right - area.right : null },
      budgetLine: bb ? { width: bb.width, fromTop: area.height > 0 ? (bb.top + bb.height / 2 - area.top) / area.height : null } : null
    });
  }
  var tables = document.querySelectorAll("table.metrics");
  for (var k = 0; k < tables.length; k++) {
    var t = tables[k], rows = t.tBodies[0] ? t.tBodies[0].rows : [], laid = 0;
    for (var m = 0; m < rows.length; m++) if (rows[m].getBoundingClientRect().height > 0) laid++;
    out.tables.push({ budget: Number(t.getAttribute("data-budget")), rows: rows.length, rowsLaidOut: laid, width: t.getBoundingClientRect().width });
  }
  var f = document.querySelector("svg.frontier");
  if (f) {
    var marks = f.querySelectorAll("g.point path.marker"), shown = 0;
    for (var q = 0; q < marks.length; q++) if (marks[q].getBoundingClientRect().width > 0) shown++;
    out.frontier = { width: f.getBoundingClientRect().width, points: f.querySelectorAll("g.point").length, markersDrawn: shown, labels: f.querySelectorAll("text.point-label").length };
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
table.sources td { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; } table.sources th[scope=row] { white-space: nowrap; }
td.worst { background: #fff4e6; color: #b35c00; font-weight: 700; }
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
svg.trace text.epoch-label { fill: var(--epoch); font-size: 10px; paint-order: stroke; stroke: #fbfbfe; stroke-width: 3px; stroke-linejoin: round; }
svg.trace path.out-missing, svg.trace .key-out-missing { stroke: var(--budget); stroke-width: 1.6; fill: none; }
svg.trace g.hover rect { fill: transparent; } svg.trace g.hover rect:hover { fill: rgba(100, 100, 160, 0.08); }
svg.trace text.empty { fill: var(--muted); font-size: 14px; }
ol.epochs { padding-left: 22px; } ol.epochs > li { margin: 6px 0 12px; } ol.epochs p { margin: 2px 0; }
table.stages td:nth-child(n+2) { text-align: right; font-variant-numeric: tabular-nums; } table.stages td:nth-child(4) { text-align: left; }
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
  const opts = report.options ?? ({} as EvalReport["options"]);
  const sections = [
    renderThresholds(thresholds),
    renderNotes(report.notes ?? []),
    renderFailedRuns(report.failedRuns ?? []),
    renderInfeasibleRuns(report.infeasibleRuns ?? []),
    renderContenders(report.contenders ?? []),
    renderFrontier(budgets, opts.pricing),
    renderBudgets(budgets, checksByCell(thresholds)),
    renderSources(report.sources, budgets),
    renderMisses(report.misses),
    renderTraces(traces),
  ];
  return htmlDocument(
    report.date,
    renderHeader(headerFacts(report, opts), navLinks(budgets, traces, Boolean(report.misses))),
    sections.filter(Boolean).join("\n"),
  );
}

/** The --fail-under checks by the metric table cell they judge (thresholdKey); a check of a metric with no column has none. */
function checksByCell(thresholds: readonly ThresholdResult[]): Map<string, ThresholdResult[]> {
  const checks = new Map<string, ThresholdResult[]>();
  for (const t of thresholds) {
    const c = columnOf(t.metric);
    if (!c) continue;
    const key = thresholdKey(t.budget, t.contender, c);
    checks.set(key, [...(checks.get(key) ?? []), t]);
  }
  return checks;
}

/** The header's facts, as name and HTML: when and where the eval ran, what it read, with which options and prices, over what corpus. */
function headerFacts(report: EvalReport, opts: EvalReport["options"]): [string, string][] {
  return [
    ["date", esc(report.date)],
    ["node", esc(report.node)],
    ["input", `<code>${esc(report.input)}</code>`],
    ["budgets", esc((opts.budgets ?? []).map(int).join(", ") || "none")],
    ["points per run", esc(int(opts.points))],
    ...(opts.config !== undefined ? [["config", `<code>${esc(opts.config)}</code>`] as [string, string]] : []),
    ...(opts.compare !== undefined ? [["compare", `<code>${esc(opts.compare)}</code>`] as [string, string]] : []),
    ["against", esc((opts.against ?? []).join(", ") || "none")],
    ...(opts.pricing
      ? [
          [
            "pricing",
            esc(`${opts.pricing.name}: cached prefix ×${opts.pricing.read}, the rest ×${opts.pricing.write} (cost per call, in input-token units)`),
          ] as [string, string],
        ]
      : []),
    ["corpus", esc(`${int(report.corpus?.runs)} runs, ${int(report.corpus?.prompts)} prompt points, ${int(report.corpus?.pairs)} consecutive pairs`)],
  ];
}

/** The table of contents: the frontier, each budget's metrics, the missed evidence (with --misses), each trace. */
function navLinks(budgets: EvalReport["budgets"], traces: EvalReport["traces"], misses = false): string[] {
  const nav: string[] = [];
  if (budgets.length) nav.push(`<li><a href="#frontier">evidence recall against cost per call</a></li>`);
  budgets.forEach((b, i) => nav.push(`<li><a href="#budget-${i}">budget ${esc(int(b.budget))}</a></li>`));
  if (misses) nav.push(`<li><a href="#misses">missed evidence by stage and kind</a></li>`);
  traces.forEach((t, i) => nav.push(`<li><a href="#trace-${i}">run <code>${esc(t.runId)}</code> at ${esc(int(t.budget))}</a></li>`));
  return nav;
}

/** The page's header: its title, the facts and the table of contents (none when empty). */
function renderHeader(facts: [string, string][], nav: string[]): string {
  return `<header><h1>ctxfold eval</h1>
<dl class="meta">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join("")}</dl>
${nav.length ? `<nav><ul>${nav.join("")}</ul></nav>` : ""}
</header>`;
}

/** The report's notes; "" when it has none. */
function renderNotes(notes: readonly string[]): string {
  if (!notes.length) return "";
  return `<section id="notes"><h2>Notes</h2><ul class="notes">${notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul></section>`;
}

/** The contenders with their versions and notes; "" when the report names none. */
function renderContenders(contenders: EvalReport["contenders"]): string {
  if (!contenders.length) return "";
  return `<section id="contenders"><h2>Contenders</h2><table class="contenders"><thead><tr><th>name</th><th>version</th><th>note</th></tr></thead><tbody>
${contenders.map((c) => `<tr><td>${esc(c.name)}</td><td><code>${esc(c.version)}</code></td><td>${esc(c.note)}</td></tr>`).join("\n")}
</tbody></table></section>`;
}

/** Per budget, the metric table (its cells judged by `checks`) and the samples behind it. */
function renderBudgets(budgets: EvalReport["budgets"], checks: Map<string, ThresholdResult[]>): string {
  return `<section id="metrics"><h2>Metrics per budget</h2>${budgets.length ? "" : `<p class="empty">No budget was evaluated.</p>`}
${budgets
  .map(
    (b, i) => `<section class="budget" id="budget-${i}"><h3>Budget ${esc(int(b.budget))} tokens</h3>
${renderMetricTable(i, b.budget, b.rows ?? [], checks)}
${renderMetricDetails(b.rows ?? [])}</section>`,
  )
  .join("\n")}</section>`;
}

/** Every traced run's plot and epochs. */
function renderTraces(traces: EvalReport["traces"]): string {
  return `<section id="traces"><h2>Traces: tokens per prompt point, before and after compaction</h2>${traces.length ? "" : `<p class="empty">No run was traced.</p>`}
${traces.map(renderTrace).join("\n")}</section>`;
}

/** The whole page around its header and main content: the security policy, the style sheet, and the render check. */
function htmlDocument(date: string | undefined, header: string, main: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="ctxfold eval">
<title>${esc(`ctxfold eval — ${date ?? ""}`)}</title>
<style>${kStyle}${kFrontierStyle}${kMissesCss}</style>
</head>
<body>
${header}
<main>
${main}
</main>
<pre id="render-check" hidden></pre>
<script>${kRenderCheck}</script>
</body>
</html>
`;
}
