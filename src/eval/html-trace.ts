/**
 * The HTML report's trace plots (html.ts): per traced run × budget an inline SVG line plot of the
 * tokens of every replayed prompt point before and after compaction, the budget line and the
 * epoch markers, and below it what each epoch removed.
 */
import { attrNum, compact, coord, esc, int, isNum, ticks } from "./html-format.js";
import { stageRows, stageTotals, type StageRow } from "../policy/stage-rows.js";
import type { TraceEpoch, TracePoint, TraceRun } from "./types.js";

const kPlot = { width: 880, height: 330, left: 64, right: 20, top: 40, bottom: 44 };

/** The token value of a point, or null when absent or not a finite number. */
const tok = (v: number | null | undefined): number | null => (isNum(v) ? v : null);

/** Where the plot draws: the area inside the margins and the scales from a point's index and its tokens to SVG coordinates. */
interface TraceFrame {
  left: number;
  top: number;
  /** Width and height of the plot area. */
  pw: number;
  ph: number;
  /** The largest token value the y axis shows (at least the budget). */
  yMax: number;
  /** Prompt points plotted. */
  n: number;
  x: (i: number) => number;
  y: (v: number) => number;
}

/** A series of token values, one per point, null where a point has none. */
type TokenSeries = (p: TracePoint) => number | null;

/** The frame for `points` and `budget`: the y axis reaches the largest value plotted, the x axis spans the points. */
function traceFrame(points: readonly TracePoint[], budget: number | null): TraceFrame {
  const { width: W, height: H, left, right, top, bottom } = kPlot;
  const pw = W - left - right;
  const ph = H - top - bottom;
  const n = points.length;
  let yMax = budget ?? 0;
  for (const p of points) yMax = Math.max(yMax, tok(p.tokensIn) ?? 0, tok(p.tokensOut) ?? 0);
  if (!(yMax > 0)) yMax = 1;
  const xMax = Math.max(n - 1, 1);
  const x = (i: number) => (n <= 1 ? left + pw / 2 : left + (i / xMax) * pw);
  const y = (v: number) => top + ph - (v / yMax) * ph;
  return { left, top, pw, ph, yMax, n, x, y };
}

/** The grid, the ticks and their labels, the two axes and their labels. */
function renderAxes(f: TraceFrame): string[] {
  const { left, top, pw, ph, n, x, y } = f;
  const grid: string[] = [];
  for (const v of ticks(f.yMax, 5, true)) {
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
  return [
    `<g class="axes">${grid.join("")}<line class="axis" x1="${coord(left)}" x2="${coord(left)}" y1="${coord(top)}" y2="${coord(top + ph)}"/><line class="axis" x1="${coord(left)}" x2="${coord(left + pw)}" y1="${coord(top + ph)}" y2="${coord(top + ph)}"/></g>`,
    `<text class="axis-label" x="${coord(left + pw / 2)}" y="${coord(kPlot.height - 6)}" text-anchor="middle">prompt point</text>`,
    `<text class="axis-label" transform="translate(14 ${coord(top + ph / 2)}) rotate(-90)" text-anchor="middle">tokens</text>`,
  ];
}

/** An epoch label's width at the plot's 10px: 6.2px a character, wider than "e" and digits in any system font, so estimates err wide. */
const kEpochLabelCharPx = 6.2;
/** The least room between two epoch labels. */
const kEpochLabelGapPx = 4;
/** From an epoch's line to its label. */
const kEpochLabelOffsetPx = 3;

/** Where an epoch label goes: its text, anchor and x, and the span it covers. */
interface EpochLabel {
  point: number;
  text: string;
  anchor: "start" | "end";
  x: number;
  x0: number;
  x1: number;
}

/**
 * The epoch labels drawn, left to right: each to the right of its line (to the left where it would
 * pass the plot's right edge), and only where it clears the last one drawn by kEpochLabelGapPx, so
 * that labels never overlap however dense the epochs; the first epoch is always labelled. Every
 * line keeps its tooltip, and the list under the plot has every epoch.
 */
function placeEpochLabels(f: Pick<TraceFrame, "left" | "pw" | "x">, starts: readonly { point: number; epoch: number }[]): EpochLabel[] {
  const labels: EpochLabel[] = [];
  let clear = -Infinity;
  for (const { point, epoch } of starts) {
    const text = `e${int(epoch)}`;
    const width = text.length * kEpochLabelCharPx;
    const at = f.x(point);
    const right = at + kEpochLabelOffsetPx + width <= f.left + f.pw;
    const x = right ? at + kEpochLabelOffsetPx : at - kEpochLabelOffsetPx;
    const x0 = right ? x : x - width;
    if (x0 < clear) continue;
    labels.push({ point, text, anchor: right ? "start" : "end", x, x0, x1: x0 + width });
    clear = x0 + width + kEpochLabelGapPx;
  }
  return labels;
}

/** A vertical line where each epoch starts (drawn under the token lines), labelled where there is room (placeEpochLabels); none when no epoch starts. */
function renderEpochMarkers(f: TraceFrame, points: readonly TracePoint[]): { markup: string[]; labelled: number } {
  const starts = points.flatMap((p, i) => (p.newEpoch ? [{ point: i, epoch: p.epoch }] : []));
  if (starts.length === 0) return { markup: [], labelled: 0 };
  const lines = starts.map(({ point, epoch }) => {
    const xx = coord(f.x(point));
    return `<line class="epoch" data-point="${point}" data-epoch="${esc(int(epoch))}" x1="${xx}" x2="${xx}" y1="${coord(f.top)}" y2="${coord(f.top + f.ph)}"><title>${esc(`epoch ${int(epoch)} starts at point ${point}`)}</title></line>`;
  });
  const labels = placeEpochLabels(f, starts).map(
    (l) =>
      `<text class="epoch-label" data-point="${l.point}" x="${coord(l.x)}" y="${coord(f.top + 11)}"${l.anchor === "end" ? ` text-anchor="end"` : ""}>${esc(l.text)}</text>`,
  );
  return { markup: [`<g class="epochs">${lines.join("")}${labels.join("")}</g>`], labelled: labels.length };
}

/** The budget's horizontal line and its label; none without a budget. */
function renderBudgetLine(f: TraceFrame, budget: number | null): string[] {
  if (budget === null) return [];
  const yy = coord(f.y(budget));
  return [
    `<line class="budget" x1="${coord(f.left)}" x2="${coord(f.left + f.pw)}" y1="${yy}" y2="${yy}"><title>${esc(`budget ${int(budget)} tokens`)}</title></line>`,
    `<text class="budget-label" x="${coord(f.left + f.pw - 4)}" y="${coord(f.y(budget) + 13)}" text-anchor="end">${esc(`budget ${int(budget)}`)}</text>`,
  ];
}

/** The unbroken runs of a series: a point without a value ends one. */
function seriesRuns(points: readonly TracePoint[], value: TokenSeries): { i: number; v: number }[][] {
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
}

/** A series as a line per run (a dot for a run of one point); a missing value breaks the line. */
function renderSeries(f: TraceFrame, points: readonly TracePoint[], cls: string, value: TokenSeries): string {
  const pt = (i: number, v: number) => `${coord(f.x(i))},${coord(f.y(v))}`;
  const s: string[] = [];
  for (const seg of seriesRuns(points, value)) {
    if (seg.length === 1) s.push(`<circle class="${cls} dot" cx="${coord(f.x(seg[0].i))}" cy="${coord(f.y(seg[0].v))}" r="3"/>`);
    else s.push(`<polyline class="${cls}" points="${seg.map((q) => pt(q.i, q.v)).join(" ")}"/>`);
  }
  return s.join("");
}

/** A cross on the x axis at each point without an output (refused or threw); none when every point has one. */
function renderMissingOutputs(f: TraceFrame, points: readonly TracePoint[]): string[] {
  const missing: string[] = [];
  points.forEach((p, i) => {
    if (tok(p.tokensOut) !== null) return;
    const cx = f.x(i);
    const cy = f.top + f.ph;
    missing.push(
      `<path class="out-missing" data-point="${i}" d="M${coord(cx - 4)},${coord(cy - 4)}L${coord(cx + 4)},${coord(cy + 4)}M${coord(cx - 4)},${coord(cy + 4)}L${coord(cx + 4)},${coord(cy - 4)}"><title>${esc(`point ${i}: no output (refused or threw)`)}</title></path>`,
    );
  });
  return missing.length ? [`<g class="missing">${missing.join("")}</g>`] : [];
}

/** Hover targets with the values of each point, only for traces a reader can hover point by point. */
function renderHoverTargets(f: TraceFrame, points: readonly TracePoint[]): string[] {
  const { n, left, top, pw, ph, x } = f;
  if (!(n > 0 && n <= 2000)) return [];
  const band = n <= 1 ? pw : pw / (n - 1);
  const hovers = points.map((p, i) => {
    const x0 = Math.max(left, x(i) - band / 2);
    const x1 = Math.min(left + pw, x(i) + band / 2);
    const label = `point ${i}: ${int(p.messages)} messages, in ${int(tok(p.tokensIn))}, out ${tok(p.tokensOut) === null ? "none" : int(p.tokensOut)}, epoch ${int(p.epoch)}${p.newEpoch ? " (new)" : ""}`;
    return `<rect x="${coord(x0)}" y="${coord(top)}" width="${coord(Math.max(0, x1 - x0))}" height="${coord(ph)}"><title>${esc(label)}</title></rect>`;
  });
  return [`<g class="hover">${hovers.join("")}</g>`];
}

/** The legend in the top margin: the two token lines, then the budget, epochs and missing outputs where the plot has them. */
function renderLegend(has: { budget: boolean; epochs: boolean; missing: boolean }): string {
  const legend: [string, string][] = [
    ["tokens-in", "tokens in (before)"],
    ["tokens-out", "tokens out (after compaction)"],
  ];
  if (has.budget) legend.push(["budget", "budget"]);
  if (has.epochs) legend.push(["epoch", "new epoch"]);
  if (has.missing) legend.push(["out-missing", "no output"]);
  let lx = kPlot.left;
  const items = legend.map(([cls, label]) => {
    const swatch =
      cls === "out-missing"
        ? `<path class="key-out-missing" d="M${coord(lx + 5)},${coord(10)}L${coord(lx + 13)},${coord(18)}M${coord(lx + 5)},${coord(18)}L${coord(lx + 13)},${coord(10)}"/>`
        : `<line class="key-${cls}" x1="${coord(lx)}" x2="${coord(lx + 18)}" y1="14" y2="14"/>`;
    const item = `<g class="legend-item">${swatch}<text x="${coord(lx + 23)}" y="14" dominant-baseline="middle">${esc(label)}</text></g>`;
    lx += 23 + label.length * 6.6 + 16;
    return item;
  });
  return `<g class="legend">${items.join("")}</g>`;
}

/** One traced run at one budget as an SVG line plot, its layers drawn bottom to top; with the number of epoch labels drawn. */
function renderTracePlot(trace: TraceRun, index: number): { svg: string; labelled: number } {
  const { width: W, height: H } = kPlot;
  const points: TracePoint[] = trace.points ?? [];
  const budget = isNum(trace.budget) && trace.budget > 0 ? trace.budget : null;
  const f = traceFrame(points, budget);
  const { left, top, pw, ph, n } = f;
  const epochs = renderEpochMarkers(f, points);
  const missing = renderMissingOutputs(f, points);
  const parts = [
    `<title>${esc(`Tokens per prompt point of run ${trace.runId} at budget ${int(trace.budget)} (${trace.contender})`)}</title>`,
    `<rect class="plot-area" x="${coord(left)}" y="${coord(top)}" width="${coord(pw)}" height="${coord(ph)}"/>`,
    ...renderAxes(f),
    ...epochs.markup,
    ...renderBudgetLine(f, budget),
    renderSeries(f, points, "tokens-in", (p) => tok(p.tokensIn)),
    renderSeries(f, points, "tokens-out", (p) => tok(p.tokensOut)),
    ...missing,
    ...renderHoverTargets(f, points),
    ...(n === 0 ? [`<text class="empty" x="${coord(left + pw / 2)}" y="${coord(top + ph / 2)}" text-anchor="middle">no prompt points</text>`] : []),
    renderLegend({ budget: budget !== null, epochs: epochs.markup.length > 0, missing: missing.length > 0 }),
  ];
  const svg = `<svg class="trace" id="trace-svg-${index}" data-run="${esc(trace.runId)}" data-budget="${attrNum(trace.budget)}" data-contender="${esc(trace.contender)}" data-points="${n}" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img">
${parts.join("\n")}
</svg>`;
  return { svg, labelled: epochs.labelled };
}

/** "(−59.5%)" from `before` to `after`, "" where it cannot be said. */
const savedShare = (before: number, after: number): string =>
  isNum(before) && before > 0 && isNum(after) ? ` (−${((1 - after / before) * 100).toFixed(1)}%)` : "";

/** A stage table's row: its label, candidates, compactions, skips and tokens, "–" where a figure does not apply. */
const renderStageRow = (r: StageRow): string =>
  `<tr><td><code>${esc(r.label)}</code></td><td>${r.candidates === null ? "–" : esc(int(r.candidates))}</td><td>${r.compacted === null ? "–" : esc(int(r.compacted))}</td><td>${esc(r.skipped)}</td><td>${esc(int(r.tokensBefore))} → ${esc(int(r.tokensAfter))}</td></tr>`;

/**
 * One epoch: the line above its stage table states the table's own figures (stageTotals of its
 * rows: the compactor's count, from its first tokens before to its last after), then the prompt's
 * as plotted where they differ (this eval's exact count); the table; the refs new in it.
 */
function renderEpochItem(e: TraceEpoch): string {
  const rows = stageRows(e.stages ?? [], e.compactor);
  const t = stageTotals(rows, e.compactor ?? e);
  const counted = rows.length > 0 || e.compactor !== undefined;
  const plotted =
    counted && (t.tokensBefore !== e.tokensBefore || t.tokensAfter !== e.tokensAfter)
      ? `; the prompt as plotted (this eval's exact count): ${int(e.tokensBefore)} → ${int(e.tokensAfter)}`
      : "";
  const head = `${int(t.tokensBefore)} → ${int(t.tokensAfter)} tokens${savedShare(t.tokensBefore, t.tokensAfter)}${counted ? " by the compactor's count" : ""}${plotted}`;
  const refs = e.refs ?? [];
  const refList = refs.length
    ? `<details class="refs"><summary>${esc(int(refs.length))} ref${refs.length === 1 ? "" : "s"}</summary><ul>${refs.map((r) => `<li><code>${esc(r)}</code></li>`).join("")}</ul></details>`
    : `<p class="no-refs">no refs</p>`;
  const table = rows.length
    ? `<table class="stages"><thead><tr><th>stage</th><th>candidates</th><th>compacted</th><th>skipped</th><th>tokens before → after</th></tr></thead><tbody>${rows.map(renderStageRow).join("")}</tbody></table>`
    : `<p class="no-stages">no stage reports</p>`;
  return `<li data-epoch="${esc(int(e.epoch))}" data-point="${esc(int(e.atPoint))}"><p><strong>Epoch ${esc(int(e.epoch))}</strong> at point ${esc(int(e.atPoint))}: ${esc(head)}</p>
${table}
${refList}</li>`;
}

function renderEpochList(trace: TraceRun): string {
  const epochs = trace.epochs ?? [];
  if (!epochs.length) return `<p class="no-epochs">No epoch started in this run at this budget.</p>`;
  return `<ol class="epochs">
${epochs.map(renderEpochItem).join("\n")}
</ol>`;
}

/** A traced run's figure: the caption's facts, the plot, and every epoch listed under it. */
export function renderTrace(trace: TraceRun, index: number): string {
  const points = trace.points ?? [];
  const missing = points.filter((p) => tok(p.tokensOut) === null).length;
  const maxIn = points.reduce((m, p) => Math.max(m, tok(p.tokensIn) ?? 0), 0);
  const started = points.filter((p) => p.newEpoch).length;
  const plot = renderTracePlot(trace, index);
  const facts = [
    `${int(points.length)} prompt point${points.length === 1 ? "" : "s"}`,
    `max ${int(maxIn)} tokens in`,
    `${int(started)} new epoch${started === 1 ? "" : "s"}${plot.labelled < started ? ` (${int(plot.labelled)} labelled where there is room; all are listed below)` : ""}`,
    ...(missing ? [`${int(missing)} without output`] : []),
  ];
  return `<figure class="trace" id="trace-${index}">
<figcaption><strong>Run <code>${esc(trace.runId)}</code></strong> at budget ${esc(int(trace.budget))} — ${esc(trace.contender)} <span class="facts">(${esc(facts.join(", "))})</span></figcaption>
<div class="scroll">${plot.svg}</div>
<h4>Epochs</h4>
${renderEpochList(trace)}
</figure>`;
}
