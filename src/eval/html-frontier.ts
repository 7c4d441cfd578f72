/**
 * The HTML report's frontier plot (html.ts): what each contender keeps of what the next step
 * used, against what a call costs. An inline SVG scatter with one marker per contender × budget:
 *
 * - x = cost per call (EvalMetrics.costPerCall, input-token units at the report's pricing), from
 *   0 to a tenth above the largest; y = next-step evidence recall (EvalMetrics.evidenceRecall),
 *   from the highest multiple of 0.1 at least 0.05 below the lowest value (0 at the least, 0.9 at
 *   the most) to 1. Up and to the left is better.
 * - Colour is the contender (in the order of the report's rows), shape the budget (circle,
 *   square, triangle, diamond, then hollow ones); each marker is labelled "contender @ budget",
 *   a label that would cover a marker or another label moves to the nearest free line (a leader
 *   to its marker), and the legend under the plot names the colours and the shapes.
 * - Per budget, a dashed line (its own dash pattern) joins its Pareto front: the markers of that
 *   budget no other marker of it beats on both axes (cost at most, recall at least, one of them
 *   strictly).
 * - A contender × budget with nothing to measure (no pair above the budget: recall or cost
 *   null) has no marker and is named under the plot.
 *
 * Stable hooks: `svg.frontier`, `g.point[data-contender][data-budget]` (one per marker, with
 * data-cost and data-recall), `path.marker`, `text.point-label`, `polyline.pareto[data-budget]`,
 * `g.frontier-legend`, `p.not-plotted`.
 */
import { attrNum, compact, coord, esc, int, isNum, share, ticks } from "./html-format.js";
import type { Pricing } from "./metrics.js";
import type { EvalReport } from "./types.js";

const kPlot = { width: 880, height: 400, left: 64, right: 24, top: 16, bottom: 44 };
const kColors = ["#e8590c", "#364fc7", "#2b8a3e", "#c2255c", "#7048e8", "#0c8599", "#5c940d", "#862e9c", "#495057", "#d9480f"];
const kDashes = ["6 4", "2 3", "10 3 2 3", "1 5"];

/** The frontier plot's CSS, added to the report's style sheet. */
export const kFrontierStyle = `
figure.frontier { margin: 12px 0 24px; }
svg.frontier { display: block; max-width: 100%; height: auto; font-size: 11px; }
svg.frontier rect.plot-area { fill: #fbfbfe; stroke: none; }
svg.frontier line.grid { stroke: #e9e9f2; } svg.frontier line.axis, svg.frontier line.tick { stroke: #889; }
svg.frontier text { fill: #334; } svg.frontier text.axis-label { fill: var(--muted); font-size: 12px; }
svg.frontier polyline.pareto, svg.frontier line.key-pareto { fill: none; stroke: #889; stroke-width: 1.2; }
svg.frontier line.leader { stroke: #aab; stroke-width: 0.8; }
svg.frontier path.marker { stroke: #fff; stroke-width: 1; } svg.frontier path.marker.hollow { fill: #fff; stroke-width: 2; }
p.not-plotted { color: var(--muted); }
`;

interface Marker {
  contender: string;
  budget: number;
  cost: number;
  recall: number;
  color: string;
  shape: number;
  x: number;
  y: number;
}

/** A marker's outline: circle, square, triangle, diamond by `shape` mod 4, radius about `r`. */
function outline(shape: number, x: number, y: number, r = 5): string {
  const p = (dx: number, dy: number) => `${coord(x + dx)},${coord(y + dy)}`;
  switch (shape % 4) {
    case 0:
      return `M${p(-r, 0)}A${r},${r} 0 1,0 ${p(r, 0)}A${r},${r} 0 1,0 ${p(-r, 0)}Z`;
    case 1:
      return `M${p(-r * 0.9, -r * 0.9)}L${p(r * 0.9, -r * 0.9)}L${p(r * 0.9, r * 0.9)}L${p(-r * 0.9, r * 0.9)}Z`;
    case 2:
      return `M${p(0, -r * 1.2)}L${p(r * 1.1, r * 0.8)}L${p(-r * 1.1, r * 0.8)}Z`;
    default:
      return `M${p(0, -r * 1.3)}L${p(r * 1.3, 0)}L${p(0, r * 1.3)}L${p(-r * 1.3, 0)}Z`;
  }
}

const markerPath = (m: { shape: number; color: string }, x: number, y: number, attrs = "") =>
  `<path class="marker${m.shape >= 4 ? " hollow" : ""}"${attrs} d="${outline(m.shape, x, y)}" ${m.shape >= 4 ? `stroke="${m.color}"` : `fill="${m.color}"`}/>`;

/** The budget's Pareto front, cheapest first (see the module comment). */
export function paretoFront<T extends { cost: number; recall: number }>(points: readonly T[]): T[] {
  const sorted = [...points].sort((a, b) => a.cost - b.cost || b.recall - a.recall);
  const front: T[] = [];
  for (const p of sorted) if (front.length === 0 || p.recall > front[front.length - 1].recall) front.push(p);
  return front;
}

/** Legend items laid out in rows under the plot; returns the markup and the height it takes. */
function legend(items: { swatch: (x: number, y: number) => string; label: string }[], top: number, width: number): { svg: string; height: number } {
  let x = kPlot.left;
  let y = top;
  const out = items.map((it) => {
    const w = 24 + it.label.length * 6.4 + 18;
    if (x + w > width - kPlot.right && x > kPlot.left) {
      x = kPlot.left;
      y += 18;
    }
    const s = `<g class="legend-item">${it.swatch(x, y)}<text x="${coord(x + 24)}" y="${coord(y)}" dominant-baseline="middle">${esc(it.label)}</text></g>`;
    x += w;
    return s;
  });
  return { svg: `<g class="frontier-legend">${out.join("")}</g>`, height: y - top + 18 };
}

/** Where the plot draws and how a marker's cost and recall map onto it (the axes' ranges: see the module comment). */
interface Frame {
  /** The plot area's width and height, inside kPlot's margins. */
  pw: number;
  ph: number;
  /** The largest cost on the x axis, and the lowest recall on the y axis (which ends at 1). */
  xMax: number;
  yMin: number;
  x: (cost: number) => number;
  y: (recall: number) => number;
}

/** The plot's frame for these markers. */
function frameOf(markers: readonly Marker[]): Frame {
  const { width: W, left, right, top, bottom } = kPlot;
  const pw = W - left - right;
  const ph = kPlot.height - top - bottom;
  const xMax = Math.max(...markers.map((m) => m.cost), 0) * 1.1 || 1;
  const yMin = Math.min(0.9, Math.max(0, Math.floor(Math.min(...markers.map((m) => m.recall), 1) * 10 - 0.5) / 10));
  return { pw, ph, xMax, yMin, x: (v) => left + (v / xMax) * pw, y: (v) => top + ph - ((v - yMin) / (1 - yMin)) * ph };
}

/** The recall axis's grid lines, ticks and percentages, from 100% down to the axis's lowest recall. */
function recallGrid(f: Frame): string[] {
  const { left } = kPlot;
  const grid: string[] = [];
  const span = 1 - f.yMin;
  const step = span > 0.5 ? 0.2 : span > 0.25 ? 0.1 : 0.05;
  for (let k = 0; 1 - k * step >= f.yMin - 1e-9; k++) {
    const v = Math.round((1 - k * step) * 100) / 100;
    const yy = coord(f.y(v));
    grid.push(
      `<line class="grid" x1="${coord(left)}" x2="${coord(left + f.pw)}" y1="${yy}" y2="${yy}"/><line class="tick" x1="${coord(left - 5)}" x2="${coord(left)}" y1="${yy}" y2="${yy}"/>`,
    );
    grid.push(
      `<text class="tick-label y" x="${coord(left - 8)}" y="${yy}" text-anchor="end" dominant-baseline="middle">${esc(`${Math.round(v * 100)}%`)}</text>`,
    );
  }
  return grid;
}

/** The cost axis's ticks and their values. */
function costTicks(f: Frame): string[] {
  const axisY = kPlot.top + f.ph;
  return ticks(f.xMax, 6, false).map((v) => {
    const xx = coord(f.x(v));
    return `<line class="tick" x1="${xx}" x2="${xx}" y1="${coord(axisY)}" y2="${coord(axisY + 5)}"/><text class="tick-label x" x="${xx}" y="${coord(axisY + 18)}" text-anchor="middle">${esc(compact(v))}</text>`;
  });
}

/** The plot area, both axes with their grid and ticks, and the axes' labels (the cost's names the pricing). */
function axes(f: Frame, pricing: Pricing | undefined): string[] {
  const { left, top } = kPlot;
  const { pw, ph } = f;
  const priced = pricing ? `, ${pricing.name} pricing: cached ×${pricing.read}, the rest ×${pricing.write}` : "";
  return [
    `<rect class="plot-area" x="${coord(left)}" y="${coord(top)}" width="${coord(pw)}" height="${coord(ph)}"/>`,
    `<g class="axes">${[...recallGrid(f), ...costTicks(f)].join("")}<line class="axis" x1="${coord(left)}" x2="${coord(left)}" y1="${coord(top)}" y2="${coord(top + ph)}"/><line class="axis" x1="${coord(left)}" x2="${coord(left + pw)}" y1="${coord(top + ph)}" y2="${coord(top + ph)}"/></g>`,
    `<text class="axis-label" x="${coord(left + pw / 2)}" y="${coord(top + ph + 36)}" text-anchor="middle">${esc(`cost per call (input-token units${priced})`)}</text>`,
    `<text class="axis-label" transform="translate(14 ${coord(top + ph / 2)}) rotate(-90)" text-anchor="middle">next-step evidence recall</text>`,
  ];
}

/** Each budget's Pareto front as a dashed line (one of two markers or more). */
function paretoLines(markers: readonly Marker[], budgets: readonly number[]): string[] {
  const lines: string[] = [];
  budgets.forEach((b, i) => {
    const front = paretoFront(markers.filter((m) => m.budget === b));
    if (front.length >= 2)
      lines.push(
        `<polyline class="pareto" data-budget="${attrNum(b)}" stroke-dasharray="${kDashes[i % kDashes.length]}" points="${front.map((m) => `${coord(m.x)},${coord(m.y)}`).join(" ")}"/>`,
      );
  });
  return lines;
}

/** Where a marker's label goes: its text's left edge and width, its baseline, and whether it sits left of the marker. */
interface LabelPlace {
  x0: number;
  w: number;
  ly: number;
  onLeft: boolean;
}

/** A box no label may overlap: a marker's, or a label placed already. */
interface Taken {
  x0: number;
  x1: number;
  y: number;
}

/**
 * Places a marker's label right of it (left of it in the plot's right quarter), on its line when
 * free, else on the nearest line below or above clear of every marker and of the labels placed
 * before; the label's box is added to `taken`.
 */
function placeLabel(m: Marker, label: string, taken: Taken[], pw: number): LabelPlace {
  const w = label.length * 6.2;
  const onLeft = m.x > kPlot.left + pw * 0.75;
  const x0 = onLeft ? m.x - 9 - w : m.x + 9;
  const free = (ly: number) => !taken.some((p) => Math.abs(p.y - ly) < 12 && p.x0 < x0 + w && x0 < p.x1);
  const shifts = [0, 12, -12, 24, -24, 36, -36, 48, -48];
  const ly = m.y + 4 + (shifts.find((d) => free(m.y + 4 + d)) ?? 0);
  taken.push({ x0, x1: x0 + w, y: ly });
  return { x0, w, ly, onLeft };
}

/** One contender × budget's marker: its tooltip, the leader to a moved label, the marker and its label. */
function pointMark(m: Marker, label: string, { x0, w, ly, onLeft }: LabelPlace): string {
  const leader =
    Math.abs(ly - (m.y + 4)) > 1
      ? `<line class="leader" x1="${coord(m.x)}" y1="${coord(m.y)}" x2="${coord(onLeft ? x0 + w : x0)}" y2="${coord(ly - 4)}"/>`
      : "";
  const tip = `${m.contender} at budget ${int(m.budget)}: evidence recall ${share(m.recall)}, cost per call ${int(m.cost)}`;
  return `<g class="point" data-contender="${esc(m.contender)}" data-budget="${attrNum(m.budget)}" data-cost="${attrNum(m.cost)}" data-recall="${attrNum(m.recall)}"><title>${esc(tip)}</title>${leader}${markerPath(m, m.x, m.y)}<text class="point-label" x="${coord(onLeft ? x0 + w : x0)}" y="${coord(ly)}"${onLeft ? ' text-anchor="end"' : ""}>${esc(label)}</text></g>`;
}

/** Every marker with its label, labels placed from the top of the plot down (left to right on a line). */
function pointMarks(markers: readonly Marker[], pw: number): string[] {
  const taken: Taken[] = markers.map((m) => ({ x0: m.x - 7, x1: m.x + 7, y: m.y + 4 }));
  return [...markers]
    .sort((a, b) => a.y - b.y || a.x - b.x)
    .map((m) => {
      const label = `${m.contender} @ ${compact(m.budget)}`;
      return pointMark(m, label, placeLabel(m, label, taken, pw));
    });
}

/** The legend: the contenders' colours, then the budgets' shapes with their front's dash. */
function frontierKey(contenders: readonly string[], budgets: readonly number[], top: number): { svg: string; height: number } {
  return legend(
    [
      ...contenders.map((c, i) => ({ label: c, swatch: (lx: number, ly: number) => markerPath({ shape: 0, color: kColors[i % kColors.length] }, lx + 9, ly) })),
      ...budgets.map((b, i) => ({
        label: `budget ${int(b)}`,
        swatch: (lx: number, ly: number) =>
          `<line class="key-pareto" x1="${coord(lx)}" x2="${coord(lx + 18)}" y1="${coord(ly)}" y2="${coord(ly)}" stroke-dasharray="${kDashes[i % kDashes.length]}"/>${markerPath({ shape: i, color: "#667" }, lx + 9, ly)}`,
      })),
    ],
    top,
    kPlot.width,
  );
}

/** The frontier plot as an inline SVG: axes, the budgets' fronts, the markers, and the legend under them. */
function plot(markers: Marker[], budgets: number[], contenders: string[], pricing: Pricing | undefined): string {
  const f = frameOf(markers);
  for (const m of markers) [m.x, m.y] = [f.x(m.cost), f.y(m.recall)];
  const keyTop = kPlot.top + f.ph + kPlot.bottom + 8;
  const key = frontierKey(contenders, budgets, keyTop);
  const parts = [...axes(f, pricing), ...paretoLines(markers, budgets), ...pointMarks(markers, f.pw), key.svg];
  const W = kPlot.width;
  const H = keyTop + key.height;
  return `<svg class="frontier" data-points="${markers.length}" width="${W}" height="${coord(H)}" viewBox="0 0 ${W} ${coord(H)}" role="img">
<title>Next-step evidence recall against cost per call, per contender and budget</title>
${parts.join("\n")}
</svg>`;
}

/** The frontier section of the report (see the module comment); "" when no budget was evaluated. */
export function renderFrontier(budgets: EvalReport["budgets"], pricing?: Pricing): string {
  if (!budgets.length) return "";
  const contenders: string[] = [];
  for (const b of budgets) for (const r of b.rows ?? []) if (!contenders.includes(r.contender)) contenders.push(r.contender);
  const markers: Marker[] = [];
  const skipped: string[] = [];
  budgets.forEach((b, shape) => {
    for (const r of b.rows ?? []) {
      const cost = r.metrics?.costPerCall;
      const recall = r.metrics?.evidenceRecall;
      if (isNum(cost) && isNum(recall))
        markers.push({
          contender: r.contender,
          budget: b.budget,
          cost,
          recall,
          color: kColors[contenders.indexOf(r.contender) % kColors.length],
          shape,
          x: 0,
          y: 0,
        });
      else skipped.push(`${r.contender} @ ${int(b.budget)}`);
    }
  });
  const notPlotted = skipped.length
    ? `<p class="not-plotted">Not plotted (nothing to measure: no prompt pair above the budget, or no evidence): ${esc(skipped.join(", "))}.</p>`
    : "";
  const body = markers.length
    ? `<div class="scroll">${plot(
        markers,
        budgets.map((b) => b.budget),
        contenders,
        pricing,
      )}</div>`
    : `<p class="empty">No contender had a prompt above a budget: nothing to plot.</p>`;
  return `<section id="frontier"><h2>Evidence recall against cost per call</h2>
<figure class="frontier"><figcaption>One marker per contender and budget: up is more of what the next step used still in the prompt, left is cheaper. Dashed: each budget's Pareto front.</figcaption>
${body}
${notPlotted}</figure></section>`;
}
