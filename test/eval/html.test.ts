/**
 * The HTML report of `ctxfold eval --html` (src/eval/html.ts) over hand-built EvalReports:
 * escaping, no network resource, no NaN on edge cases, one metric table per budget and one plot
 * per trace, epoch markers, the budget line's scale; then the page loaded in headless Chromium,
 * whose inline render check says what was laid out (skipped when chromium is not installed).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { ctxfold } from "../../src/eval/contenders.js";
import { renderHtmlReport } from "../../src/eval/html.js";
import { traceRun } from "../../src/eval/replay.js";
import { generateRun } from "../../src/gen/run.js";
import { findExecutable } from "../helpers.js";
import type { EvalMetrics, EvalReport, TraceEpoch, TraceRun } from "../../src/eval/types.js";

// ---------------------------------------------------------------------------------------------
// Builders

function metrics(over: Partial<EvalMetrics> = {}): EvalMetrics {
  return {
    prompts: 40,
    overBudget: 12,
    criticalFits: 11,
    withinBudget: 1,
    infeasible: 1,
    infeasibleWhereCriticalFits: 0,
    errors: 0,
    errorSamples: [],
    newViolationPrompts: 0,
    newViolationCodes: {},
    violationFree: 1,
    criticalVerbatim: 0.975,
    criticalVerbatimByKind: { system: 1, "last-user": 0.95 },
    failedResults: 4,
    failedVisible: 0.75,
    failedMissSamples: [],
    recoverable: 0.5,
    compression: 0.42,
    cachePrefix: 0.875,
    cachePrefixOverBudget: 0.6,
    cachePrefixPairs: 39,
    latencyMs: { p50: 1.234, p99: 17.5 },
    throughput: 812.4,
    refs: { total: 1234, unresolved: 0 },
    anomalies: {},
    evidenceRecall: 0.8125,
    evidence: { prompts: 10, terms: 64, kept: 52 },
    costPerCall: 2425.4,
    costSavings: 0.875,
    costPairs: 9,
    budgetFill: { p50: 0.6, p95: 0.955 },
    ...over,
  };
}

interface TraceSpec {
  tokensIn: number[];
  /** Defaults to tokensIn capped at the budget. */
  tokensOut?: (number | null)[];
  /** Indexes of the points that start a new epoch. */
  newEpochAt?: number[];
  epochs?: TraceEpoch[];
  contender?: string;
}

function trace(runId: string, budget: number, spec: TraceSpec): TraceRun {
  const starts = new Set(spec.newEpochAt ?? []);
  let epoch = 0;
  return {
    runId,
    budget,
    contender: spec.contender ?? "ctxfold",
    points: spec.tokensIn.map((tokensIn, i) => {
      if (starts.has(i)) epoch++;
      const tokensOut = spec.tokensOut ? spec.tokensOut[i] : Math.min(tokensIn, budget);
      return { messages: 3 + 2 * i, tokensIn, tokensOut, epoch, newEpoch: starts.has(i) };
    }),
    epochs: spec.epochs ?? [],
  };
}

function epochOf(epoch: number, atPoint: number, refs: string[]): TraceEpoch {
  return {
    epoch,
    atPoint,
    tokensBefore: 9000,
    tokensAfter: 3000,
    refs,
    stages: [
      { name: "steps", candidates: 12, compacted: 9, tokensBefore: 9000, tokensAfter: 5000 },
      { name: "summarize", candidates: 3, compacted: 2, tokensBefore: 5000, tokensAfter: 3000 },
    ],
  };
}

function report(over: Partial<EvalReport> = {}): EvalReport {
  const contenders = ["ctxfold", "ctxfold (compare)", "LangChain trimMessages"];
  const budgets = over.options?.budgets ?? [8000, 32000];
  return {
    ctxfold: "eval",
    version: 1,
    date: "2025-01-02T03:04:05.000Z",
    node: "v20.11.0",
    input: "runs.jsonl",
    options: { budgets, points: 40, against: ["langchain"] },
    corpus: { runs: 3, prompts: 120, pairs: 117 },
    contenders: contenders.map((name) => ({ name, version: "1.0.0", note: "" })),
    notes: [],
    failedRuns: [],
    infeasibleRuns: [],
    budgets: budgets.map((budget) => ({ budget, rows: contenders.map((contender, i) => ({ contender, metrics: metrics({ prompts: 40 + i }) })) })),
    traces: [],
    thresholds: [],
    ...over,
  };
}

// ---------------------------------------------------------------------------------------------
// Reading the output back (the report's own stable hooks; no DOM library)

/** The opening tags `<tag …class="cls"…>` (class as one of the words). */
function tags(html: string, tag: string, cls?: string): string[] {
  const all = html.match(new RegExp(`<${tag}\\b[^>]*>`, "g")) ?? [];
  return cls === undefined ? all : all.filter((t) => new RegExp(`\\bclass="(?:[^"]* )?${cls}(?: [^"]*)?"`).test(t));
}
function attr(tag: string, name: string): string {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  if (!m) throw new Error(`no ${name} in ${tag}`);
  return m[1];
}
const num = (tag: string, name: string) => Number(attr(tag, name));

/** The markup of each `<svg class="trace">…</svg>`. */
const svgs = (html: string): string[] => html.match(/<svg class="trace"[\s\S]*?<\/svg>/g) ?? [];
/** The markup of the frontier plot, "" when absent. */
const frontier = (html: string): string => /<svg class="frontier"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? "";
/** The markup of each `<table class="metrics">…</table>`. */
const metricTables = (html: string): string[] => html.match(/<table class="metrics"[\s\S]*?<\/table>/g) ?? [];
const bodyRows = (table: string): string[] => /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1].match(/<tr\b[\s\S]*?<\/tr>/g) ?? [];
/** The text of the cell of `metric` in a row. */
/** The cells of an epoch's stage table, row by row, as text. */
const epochTable = (item: string): string[][] =>
  bodyRows(/<table class="stages">[\s\S]*?<\/table>/.exec(item)?.[0] ?? "").map((r) =>
    [...r.matchAll(/<td>(?:<code>)?([^<]*)(?:<\/code>)?<\/td>/g)].map((m) => m[1]),
  );
const cell = (row: string, metric: string) => new RegExp(`<td class="[^"]*" data-metric="${metric.replace(".", "\\.")}"[^>]*>([^<]*)</td>`).exec(row)?.[1];

// ---------------------------------------------------------------------------------------------

describe("renderHtmlReport", () => {
  it("escapes every text from the data: no markup, script or attribute break-out", () => {
    const evil = {
      run: `<script>alert(1)</script>`,
      contender: `Lang"Chain' & <b>co</b>`,
      note: `peer <i>not</i> installed & "skipped"`,
      ref: `<img src=x onerror=alert(2)>`,
      reason: `</td><script>alert(3)</script>`,
      sample: `'><svg onload=alert(4)>`,
      stage: `<style>body{display:none}</style>`,
      code: `E_<X>`,
    };
    const r = report({
      options: { budgets: [8000], points: 4, against: [], config: `cfg"<x>.json` },
      contenders: [{ name: evil.contender, version: "<1>", note: evil.note }],
      notes: [evil.note],
      failedRuns: [{ id: evil.run, line: 3, code: evil.code, reason: evil.reason }],
      budgets: [
        { budget: 8000, rows: [{ contender: evil.contender, metrics: metrics({ errorSamples: [evil.sample], newViolationCodes: { [evil.code]: 2 } }) }] },
      ],
      traces: [
        {
          ...trace(evil.run, 8000, { tokensIn: [100, 9000, 400], newEpochAt: [1], contender: evil.contender }),
          epochs: [{ ...epochOf(1, 1, [evil.ref, "ok-ref"]), stages: [{ name: evil.stage, candidates: 1, compacted: 1, tokensBefore: 9, tokensAfter: 1 }] }],
        },
      ],
      thresholds: [{ metric: "within_budget", threshold: 1, budget: 8000, contender: evil.contender, value: 0.5, ok: false }],
    });
    const html = renderHtmlReport(r);
    for (const s of Object.values(evil)) expect(html.includes(s), s).toBe(false);
    // The only script is the report's own render check; no element came from the data.
    expect(html.match(/<script/gi)).toHaveLength(1);
    expect(html).toMatch(/<script>\(function \(\) \{/);
    for (const tag of ["img", "b", "i", "svg onload"]) expect(tags(html, tag)).toEqual([]);
    expect(tags(html, "style")).toHaveLength(1);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("&lt;img src=x onerror=alert(2)&gt;");
    expect(html).toContain("Lang&quot;Chain&#39; &amp; &lt;b&gt;co&lt;/b&gt;");
    // In attributes the value stays one value: data-run holds the whole escaped id.
    const [svg] = tags(html, "svg", "trace");
    expect(attr(svg, "data-run")).toBe("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(attr(svg, "data-contender")).toBe("Lang&quot;Chain&#39; &amp; &lt;b&gt;co&lt;/b&gt;");
    const [row] = bodyRows(metricTables(html)[0]);
    expect(attr(tags(row, "tr")[0], "data-contender")).toBe("Lang&quot;Chain&#39; &amp; &lt;b&gt;co&lt;/b&gt;");
  });

  it("loads nothing from the network: no URL in src/href/url(), a CSP of default-src 'none'", () => {
    const url = "https://example.com/evil.js";
    const r = report({
      notes: [`see ${url}`],
      input: "http://example.com/runs.jsonl",
      traces: [trace("run-1", 8000, { tokensIn: [10, 9000], newEpochAt: [1], epochs: [epochOf(1, 1, [url])] })],
    });
    const html = renderHtmlReport(r);
    // The data's URLs are only text.
    expect(html).toContain(`see ${url}`);
    expect(html).not.toMatch(/\b(?:src|href|action|poster|srcset|xlink:href|data)\s*=\s*["']?\s*(?:[a-z]+:)?\/\//i);
    expect(html).not.toMatch(/url\s*\(|@import|<link\b|<img\b|<iframe\b|<object\b|<embed\b/i);
    for (const a of tags(html, "a")) expect(attr(a, "href")).toMatch(/^#[a-z0-9-]+$/);
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src 'none';/);
    // With data free of URLs, no URL at all (inline SVG needs no xmlns in HTML).
    expect(renderHtmlReport(report({ traces: [trace("run-1", 8000, { tokensIn: [10, 9000], newEpochAt: [1] })] }))).not.toMatch(/https?:/);
  });

  it("prints no NaN or Infinity for empty and degenerate inputs", () => {
    const cases: EvalReport[] = [
      report({ budgets: [], traces: [], contenders: [], options: { budgets: [], points: 0, against: [] }, corpus: { runs: 0, prompts: 0, pairs: 0 } }),
      report({
        budgets: [
          {
            budget: 8000,
            rows: [
              {
                contender: "ctxfold",
                metrics: metrics({
                  prompts: 0,
                  withinBudget: null,
                  violationFree: null,
                  criticalVerbatim: null,
                  failedVisible: null,
                  recoverable: null,
                  compression: null,
                  cachePrefix: null,
                  cachePrefixOverBudget: null,
                  latencyMs: { p50: null, p99: null },
                  throughput: null,
                  criticalVerbatimByKind: { system: null },
                }),
              },
            ],
          },
        ],
        traces: [
          trace("zero-points", 8000, { tokensIn: [] }),
          trace("one-point", 8000, { tokensIn: [5000] }),
          trace("one-point-over", 8000, { tokensIn: [12000], tokensOut: [null] }),
          trace("all-null-out", 8000, { tokensIn: [9000, 10000, 11000], tokensOut: [null, null, null] }),
          trace("all-zero", 8000, { tokensIn: [0, 0, 0], tokensOut: [0, 0, 0] }),
          trace("zero-budget", 0, { tokensIn: [0, 0], tokensOut: [0, null] }),
          trace("isolated-out", 100, { tokensIn: [200, 200, 200], tokensOut: [null, 90, null] }),
        ],
      }),
      // Values a buggy producer could hand over: non-finite numbers are "n/a", never printed.
      report({
        budgets: [
          {
            budget: 8000,
            rows: [
              {
                contender: "ctxfold",
                metrics: metrics({ withinBudget: Number.NaN, compression: Number.POSITIVE_INFINITY, latencyMs: { p50: Number.NaN, p99: -Infinity } }),
              },
            ],
          },
        ],
        traces: [trace("nan", 8000, { tokensIn: [Number.NaN, 100, Number.POSITIVE_INFINITY], tokensOut: [Number.NaN, 50, 60] })],
      }),
    ];
    for (const r of cases) {
      const html = renderHtmlReport(r);
      expect(html).not.toMatch(/NaN|Infinity|undefined/);
      // Every coordinate is a plain number.
      for (const m of html.matchAll(/\s(?:x|y|x1|x2|y1|y2|cx|cy|r|width|height)="([^"]*)"/g)) expect(m[1]).toMatch(/^-?\d+(\.\d)?$/);
      for (const m of html.matchAll(/\spoints="([^"]*)"/g)) expect(m[1]).toMatch(/^-?\d+(\.\d)?,-?\d+(\.\d)?( -?\d+(\.\d)?,-?\d+(\.\d)?)+$/);
    }
    const html = renderHtmlReport(cases[1]);
    const plots = svgs(html);
    expect(plots).toHaveLength(7);
    const [zero, one, oneOver, allNull, , , isolated] = plots;
    expect(zero).toContain("no prompt points");
    expect(tags(zero, "polyline")).toEqual([]);
    // One point: dots, not an invisible one-point line.
    expect(tags(one, "circle", "tokens-in")).toHaveLength(1);
    expect(tags(one, "circle", "tokens-out")).toHaveLength(1);
    expect(tags(one, "polyline")).toEqual([]);
    expect(tags(oneOver, "circle", "tokens-out")).toEqual([]);
    expect(tags(oneOver, "path", "out-missing")).toHaveLength(1);
    // No output anywhere: the input line, no output line, a cross per point.
    expect(tags(allNull, "polyline", "tokens-in")).toHaveLength(1);
    expect(tags(allNull, "polyline", "tokens-out")).toEqual([]);
    expect(tags(allNull, "path", "out-missing").map((t) => attr(t, "data-point"))).toEqual(["0", "1", "2"]);
    expect(tags(isolated, "circle", "tokens-out")).toHaveLength(1);
    expect(renderHtmlReport(cases[0])).toContain("No budget was evaluated.");
    expect(renderHtmlReport(cases[0])).toContain("No run was traced.");
    expect(metricTables(renderHtmlReport(cases[0]))).toEqual([]);
  });

  it("draws one metric table per budget with a row per contender and formatted cells", () => {
    const r = report({ options: { budgets: [4000, 8000, 32000], points: 40, against: [] } });
    r.budgets[1].rows[2].metrics = metrics({
      withinBudget: null,
      compression: 0.4213,
      latencyMs: { p50: 0.5, p99: 1234.6 },
      throughput: 5.5,
      refs: null,
      anomalies: { "orphan-result": 3 },
    });
    r.budgets[1].rows[0].metrics = metrics({ refs: { total: 50, unresolved: 2 }, withinBudget: 0.9995, violationFree: 0.00001 });
    const html = renderHtmlReport(r);
    const tables = metricTables(html);
    expect(tables.map((t) => attr(tags(t, "table")[0], "data-budget"))).toEqual(["4000", "8000", "32000"]);
    for (const t of tables) {
      const rows = bodyRows(t);
      expect(rows.map((row) => attr(tags(row, "tr")[0], "data-contender"))).toEqual(["ctxfold", "ctxfold (compare)", "LangChain trimMessages"]);
      // A header cell per metric, a cell per metric in every row.
      const columns = (/<thead>([\s\S]*?)<\/thead>/.exec(t)?.[1].match(/<th\b/g) ?? []).length;
      for (const row of rows) expect((row.match(/<td\b/g) ?? []).length).toBe(columns - 1);
    }
    const first = bodyRows(tables[0])[0];
    expect(cell(first, "prompts")).toBe("40");
    expect(cell(first, "withinBudget")).toBe("100.0%");
    expect(cell(first, "criticalVerbatim")).toBe("97.5%");
    expect(cell(first, "cachePrefix")).toBe("87.5%");
    expect(cell(first, "savings")).toBe("58.0%");
    expect(cell(first, "latencyMs.p50")).toBe("1.23 ms");
    expect(cell(first, "latencyMs.p99")).toBe("17.5 ms");
    expect(cell(first, "throughput")).toBe("812/s");
    expect(cell(first, "evidenceRecall")).toBe("81.3%");
    expect(cell(first, "evidence.terms")).toBe("64");
    expect(cell(first, "costPerCall")).toBe("2,425");
    expect(cell(first, "costSavings")).toBe("87.5%");
    expect(cell(first, "budgetFill.p50")).toBe("60.0%");
    expect(cell(first, "budgetFill.p95")).toBe("95.5%");
    // The table's names are the --fail-under names.
    for (const label of ["evidence recall", "cost per call", "cost savings", "budget fill", "budget fill p95", "savings"])
      expect(tables[0]).toContain(`>${label}</th>`);
    const odd = bodyRows(tables[1])[2];
    expect(cell(odd, "withinBudget")).toBe("n/a");
    expect(odd).toMatch(/<td class="share na" data-metric="withinBudget">n\/a<\/td>/);
    expect(cell(odd, "savings")).toBe("57.9%");
    expect(cell(odd, "latencyMs.p50")).toBe("0.50 ms");
    expect(cell(odd, "latencyMs.p99")).toBe("1,235 ms");
    expect(cell(odd, "throughput")).toBe("5.50/s");
    expect([cell(odd, "refs.total"), cell(odd, "refs.unresolved")]).toEqual(["n/a", "n/a"]);
    // A miss never prints as 100%, a hit never as 0%.
    expect([cell(bodyRows(tables[1])[0], "withinBudget"), cell(bodyRows(tables[1])[0], "violationFree")]).toEqual(["99.95%", "0.001%"]);
    expect([cell(first, "refs.total"), cell(first, "refs.unresolved")]).toEqual(["1,234", "0"]);
    // Unresolved refs stand out.
    expect(bodyRows(tables[1])[0]).toMatch(/<td class="count warn" data-metric="refs\.unresolved">2<\/td>/);
    expect(tags(first, "td", "warn")).toEqual([]);
    expect(html).toMatch(/anomalies the adapter mended \(points\)<\/dt><dd><code>orphan-result<\/code> ×3/);
    // The breakdowns behind the table.
    expect(html).toContain("last-user 95.0%");
  });

  it("highlights the cells of failed --fail-under checks and lists every check", () => {
    const r = report({
      thresholds: [
        { metric: "within_budget", threshold: 1, budget: 8000, contender: "ctxfold", value: 0.9, ok: false },
        { metric: "cache_prefix", threshold: 0.85, budget: 8000, contender: "ctxfold", value: 0.875, ok: true },
        { metric: "savings", threshold: 0.7, budget: 32000, contender: "ctxfold", value: null, ok: false },
        { metric: "budget_fill", threshold: 0.5, budget: 32000, contender: "ctxfold", value: 0.6, ok: true },
        { metric: "evidence_recall", threshold: 0.9, budget: 32000, contender: "ctxfold", value: 0.8125, ok: false },
      ],
    });
    const html = renderHtmlReport(r);
    const [t8, t32] = metricTables(html);
    const row8 = bodyRows(t8)[0];
    expect(row8).toMatch(/<td class="share threshold-fail" data-metric="withinBudget" title="--fail-under within_budget=100\.0%: 90\.0%, FAILED">/);
    expect(row8).toMatch(/<td class="share threshold-ok" data-metric="cachePrefix"/);
    expect(bodyRows(t32)[0]).toMatch(/<td class="share threshold-fail" data-metric="savings" title="--fail-under savings=70\.0%: n\/a, FAILED">/);
    expect(bodyRows(t32)[0]).toMatch(/<td class="share threshold-ok" data-metric="budgetFill\.p50" title="--fail-under budget_fill=50\.0%: 60\.0%, passed">/);
    expect(bodyRows(t32)[0]).toMatch(
      /<td class="share threshold-fail" data-metric="evidenceRecall" title="--fail-under evidence_recall=90\.0%: 81\.3%, FAILED">/,
    );
    // Other contenders and budgets were not checked.
    expect(tags(bodyRows(t8)[1], "td", "threshold-fail")).toEqual([]);
    expect(tags(bodyRows(t32)[0], "td", "threshold-fail")).toHaveLength(2);
    expect(tags(html, "td", "threshold-fail")).toHaveLength(3);
    const checks = /<table class="thresholds">[\s\S]*?<\/table>/.exec(html)?.[0] ?? "";
    expect(bodyRows(checks).map((row) => attr(tags(row, "tr")[0], "class"))).toEqual(["fail", "ok", "fail", "ok", "fail"]);
    expect(html).toContain("3 of 5 checks failed.");
    expect(renderHtmlReport(report())).not.toContain('class="thresholds"');
  });

  it("draws the frontier: one labelled marker per contender × budget at (cost per call, evidence recall)", () => {
    const r = report({ options: { budgets: [8000, 32000], points: 40, against: [], pricing: { name: "openai", read: 0.1, write: 1 } } });
    const values: Record<string, [number, number]> = { ctxfold: [1152, 0.685], "ctxfold (compare)": [1500, 0.9], "LangChain trimMessages": [4128, 0.881] };
    for (const b of r.budgets)
      for (const row of b.rows) {
        const [cost, recall] = values[row.contender];
        row.metrics = metrics({ costPerCall: cost * (b.budget / 8000), evidenceRecall: recall });
      }
    const html = renderHtmlReport(r);
    const svg = frontier(html);
    expect(svg).not.toBe("");
    const points = tags(svg, "g", "point");
    expect(points).toHaveLength(6);
    expect(points.map((p) => [attr(p, "data-contender"), attr(p, "data-budget")]).sort()).toEqual([
      ["LangChain trimMessages", "32000"],
      ["LangChain trimMessages", "8000"],
      ["ctxfold (compare)", "32000"],
      ["ctxfold (compare)", "8000"],
      ["ctxfold", "32000"],
      ["ctxfold", "8000"],
    ]);
    expect(tags(svg, "path", "marker").length).toBeGreaterThanOrEqual(6);
    expect((svg.match(/<text class="point-label"/g) ?? []).length).toBe(6);
    expect(svg).toContain(">ctxfold @ 8k</text>");
    expect(svg).toContain(">LangChain trimMessages @ 32k</text>");
    // Budgets have their own shapes and Pareto lines; the legend names contenders and budgets.
    expect(tags(svg, "polyline", "pareto").map((t) => attr(t, "data-budget"))).toEqual(["8000", "32000"]);
    expect(svg).toMatch(
      /<g class="frontier-legend">[\s\S]*>ctxfold<[\s\S]*>ctxfold \(compare\)<[\s\S]*>LangChain trimMessages<[\s\S]*>budget 8,000<[\s\S]*>budget 32,000</,
    );
    expect(svg).toContain("openai pricing: cached ×0.1, the rest ×1");
    // Cheaper is left, higher recall is up.
    const at = (c: string, b: string) => {
      const g = /<g class="point"[^>]*>[\s\S]*?<\/g>/g;
      for (const m of svg.matchAll(g)) {
        const head = tags(m[0], "g")[0];
        if (attr(head, "data-contender") === c && attr(head, "data-budget") === b) {
          const d = attr(tags(m[0], "path", "marker")[0], "d");
          const [x, y] = (/M(-?[\d.]+),(-?[\d.]+)/.exec(d) ?? []).slice(1).map(Number);
          return { x, y };
        }
      }
      throw new Error(`no marker ${c} @ ${b}`);
    };
    expect(at("ctxfold", "8000").x).toBeLessThan(at("LangChain trimMessages", "8000").x);
    expect(at("ctxfold", "8000").y).toBeGreaterThan(at("LangChain trimMessages", "8000").y);
    expect(at("ctxfold", "8000").x).toBeLessThan(at("ctxfold", "32000").x);
    // The Pareto front of 8k: ctxfold (cheapest), then ctxfold (compare) (more recall); LangChain is beaten by the compare row.
    expect(attr(tags(svg, "polyline", "pareto")[0], "points").split(" ")).toHaveLength(2);
    expect(html).toMatch(/<dt>pricing<\/dt><dd>openai: cached prefix ×0\.1, the rest ×1/);
  });

  it("leaves out of the frontier what was not measured, and names it; no budget, no frontier", () => {
    const r = report();
    r.budgets[1].rows[0].metrics = metrics({ evidenceRecall: null });
    r.budgets[1].rows[2].metrics = metrics({ costPerCall: null });
    const html = renderHtmlReport(r);
    expect(tags(frontier(html), "g", "point")).toHaveLength(4);
    expect(html).toMatch(/<p class="not-plotted">Not plotted[^<]*: ctxfold @ 32,000, LangChain trimMessages @ 32,000\.<\/p>/);
    for (const b of r.budgets) for (const row of b.rows) row.metrics = metrics({ evidenceRecall: null });
    expect(frontier(renderHtmlReport(r))).toBe("");
    expect(renderHtmlReport(r)).toContain("nothing to plot");
    expect(renderHtmlReport(report({ budgets: [], options: { budgets: [], points: 0, against: [] } }))).not.toContain('id="frontier"');
  });

  it("lists the notes, the runs the eval could not use and those the first contender refused", () => {
    const html = renderHtmlReport(
      report({
        notes: ["@mastra/core is not installed: Mastra skipped"],
        failedRuns: [
          { line: 7, code: "E_SCHEMA", reason: "messages[2].role: invalid" },
          { id: "r-9", line: 9, code: "E_NOT_A_RUN", reason: "no messages" },
        ],
        infeasibleRuns: [{ id: "r-huge", budget: 4000, points: 12 }],
      }),
    );
    const refused = /<table class="infeasible-runs">[\s\S]*?<\/table>/.exec(html)?.[0] ?? "";
    expect(bodyRows(refused)).toEqual(["<tr><td><code>r-huge</code></td><td>4,000</td><td>12</td></tr>"]);
    expect(renderHtmlReport(report())).not.toMatch(/infeasible-runs|failed-runs|id="notes"/);
    expect(html).toContain("<li>@mastra/core is not installed: Mastra skipped</li>");
    const failed = /<table class="failed-runs">[\s\S]*?<\/table>/.exec(html)?.[0] ?? "";
    expect(bodyRows(failed)).toHaveLength(2);
    expect(failed).toContain("E_NOT_A_RUN");
    expect(failed).toContain("<code>r-9</code>");
    expect(html).toContain("Runs the eval could not use (2)");
  });

  it("draws one plot per trace: both lines, an epoch marker per new epoch, the points in order", () => {
    const tokensIn = [1000, 3000, 6000, 9000, 4000, 7000, 10000, 5000];
    const tokensOut = [1000, 3000, 6000, 3500, 4000, 7000, null, 5000];
    const r = report({
      traces: [
        trace("run-a", 8000, { tokensIn, tokensOut, newEpochAt: [3, 6], epochs: [epochOf(1, 3, ["ref:a/1", "ref:a/2"]), epochOf(2, 6, [])] }),
        trace("run-a", 32000, { tokensIn }),
        trace("run-b", 8000, { tokensIn: [100, 200], newEpochAt: [0, 1] }),
      ],
    });
    const html = renderHtmlReport(r);
    const plots = svgs(html);
    expect(plots.map((s) => [attr(s, "data-run"), attr(s, "data-budget")])).toEqual([
      ["run-a", "8000"],
      ["run-a", "32000"],
      ["run-b", "8000"],
    ]);
    const [a8, a32, b8] = plots;
    expect(tags(a8, "line", "epoch").map((t) => attr(t, "data-point"))).toEqual(["3", "6"]);
    expect(tags(a32, "line", "epoch")).toEqual([]);
    expect(tags(b8, "line", "epoch")).toHaveLength(2);
    // The null output splits the output line in two (points 0–5 and 7 as a dot); the input line is whole.
    expect(tags(a8, "polyline", "tokens-in")).toHaveLength(1);
    const outs = tags(a8, "polyline", "tokens-out");
    expect(outs).toHaveLength(1);
    expect(attr(outs[0], "points").split(" ")).toHaveLength(6);
    expect(tags(a8, "circle", "tokens-out")).toHaveLength(1);
    expect(tags(a8, "path", "out-missing").map((t) => attr(t, "data-point"))).toEqual(["6"]);
    // x grows with the index; the epoch markers sit at their points' x.
    const xy = attr(tags(a8, "polyline", "tokens-in")[0], "points")
      .split(" ")
      .map((p) => p.split(",").map(Number));
    expect(xy).toHaveLength(tokensIn.length);
    for (let i = 1; i < xy.length; i++) expect(xy[i][0]).toBeGreaterThan(xy[i - 1][0]);
    expect(tags(a8, "line", "epoch").map((t) => num(t, "x1"))).toEqual([xy[3][0], xy[6][0]]);
    // A legend and labelled ticks on both axes.
    expect(a8).toMatch(/<g class="legend">[\s\S]*tokens in \(before\)[\s\S]*tokens out \(after compaction\)[\s\S]*budget[\s\S]*new epoch[\s\S]*no output/);
    expect(tags(a8, "text", "tick-label").length).toBeGreaterThanOrEqual(6);
    // The epochs below the plot: where, how much, stages, refs folded away.
    const list = /<ol class="epochs">[\s\S]*?<\/ol>/.exec(html)?.[0] ?? "";
    const items = list.split("<li data-epoch").slice(1);
    expect(items).toHaveLength(2);
    expect(items[0]).toContain("<strong>Epoch 1</strong> at point 3: 9,000 → 3,000 tokens (−66.7%)");
    expect(items[0]).toMatch(
      /<details class="refs"><summary>2 refs<\/summary><ul><li><code>ref:a\/1<\/code><\/li><li><code>ref:a\/2<\/code><\/li><\/ul><\/details>/,
    );
    expect(items[0]).toMatch(/<tr><td><code>steps<\/code><\/td><td>12<\/td><td>9<\/td><td>–<\/td><td>9,000 → 5,000<\/td><\/tr>/);
    expect(items[1]).toContain("no refs");
  });

  it("labels epoch lines only where a label clears the last one: 40 epochs, labels at least 4 px apart, every line kept", () => {
    // 40 epochs, every 5th point of 200 and then every point of 40: labels of 3 characters
    // (e10…e40) are wider than the room between the lines of the second.
    for (const [points, every] of [
      [200, 5],
      [40, 1],
    ]) {
      const newEpochAt = Array.from({ length: 40 }, (_, i) => i * every);
      const tokensIn = Array.from({ length: points }, (_, i) => 2000 + 100 * i);
      const html = renderHtmlReport(report({ traces: [trace("dense", 8000, { tokensIn, newEpochAt })] }));
      const [svg] = svgs(html);
      expect(tags(svg, "line", "epoch")).toHaveLength(40);
      const labels = [...svg.matchAll(/<text class="epoch-label"([^>]*)>([^<]*)<\/text>/g)].map(([, a, text]) => {
        const x = num(a, "x");
        const width = text.length * 6.2;
        const x0 = / text-anchor="end"/.test(a) ? x - width : x;
        return { point: Number(attr(a, "data-point")), text, x0, x1: x0 + width };
      });
      expect(labels.length).toBeGreaterThan(1);
      expect(labels[0]).toMatchObject({ point: 0, text: "e1" });
      for (let i = 1; i < labels.length; i++) expect(labels[i].x0 - labels[i - 1].x1).toBeGreaterThanOrEqual(4);
      const rect = tags(svg, "rect", "plot-area")[0];
      for (const l of labels) expect(l.x1).toBeLessThanOrEqual(num(rect, "x") + num(rect, "width"));
      if (labels.length < 40) expect(html).toContain(`40 new epochs (${labels.length} labelled where there is room; all are listed below)`);
    }
    // Room for every label: all drawn, the caption says nothing of thinning.
    const sparse = renderHtmlReport(report({ traces: [trace("sparse", 8000, { tokensIn: [1, 2, 3, 4, 5, 6], newEpochAt: [1, 4] })] }));
    expect(sparse.match(/<text class="epoch-label"/g)).toHaveLength(2);
    expect(sparse).not.toContain("labelled where there is room");
  });

  it("states an epoch's figures from its stage table: the first row's tokens before, the last row's after, the prompt's as plotted beside", () => {
    const e: TraceEpoch = {
      epoch: 1,
      atPoint: 2,
      tokensBefore: 8800,
      tokensAfter: 3100,
      compactor: { tokensBefore: 9000, tokensAfter: 3200 },
      refs: [],
      stages: [
        { stage: 1, name: "tool_args", candidates: 0, compacted: 0, skipped: { no_gain: 1 }, tokensBefore: 9000, tokensAfter: 9000 },
        { stage: 3, name: "historical_text", candidates: 20, compacted: 18, skipped: { no_gain: 2 }, tokensBefore: 9000, tokensAfter: 2900 },
      ],
    };
    const html = renderHtmlReport(report({ traces: [trace("t", 8000, { tokensIn: [100, 200, 8800], newEpochAt: [2], epochs: [e] })] }));
    const item = /<li data-epoch="1"[\s\S]*?<\/li>/.exec(html)![0];
    expect(item).toContain(
      "<strong>Epoch 1</strong> at point 2: 9,000 → 3,200 tokens (−64.4%) by the compactor&#39;s count; the prompt as plotted (this eval&#39;s exact count): 8,800 → 3,100</p>",
    );
    expect(epochTable(item)).toEqual([
      ["1 tool_args", "–", "–", "not run: stage 3 replaces what it would shorten (no_gain)", "9,000 → 9,000"],
      ["3 historical_text", "20", "18", "no_gain 2", "9,000 → 2,900"],
      ["finish", "–", "–", "after the stages: exact recount, recall hint, last merges", "2,900 → 3,200"],
    ]);
  });

  it("on a real session's trace, every epoch's line states its table's first tokens before and last after", async () => {
    const messages = renderMessages(generateRun({ seed: 11, steps: 40 }).messages, "openai-chat") as OpenAIChatMessage[];
    const t = await traceRun({ id: "seed-11", messages }, await ctxfold(), 3000);
    expect(t.epochs.length).toBeGreaterThan(2);
    const html = renderHtmlReport(report({ traces: [t] }));
    const items = html.match(/<li data-epoch="\d+"[\s\S]*?<\/li>/g) ?? [];
    expect(items).toHaveLength(t.epochs.length);
    let finishes = 0;
    items.forEach((item, i) => {
      const [, before, after] = /<\/strong> at point \d+: ([\d,]+) → ([\d,]+) tokens/.exec(item)!;
      const rows = epochTable(item);
      const span = (row: string[]) => row[4].split(" → ");
      expect(span(rows[0])[0], `epoch ${i + 1}`).toBe(before);
      expect(span(rows.at(-1)!)[1], `epoch ${i + 1}`).toBe(after);
      for (let k = 1; k < rows.length; k++) expect(span(rows[k])[0]).toBe(span(rows[k - 1])[1]);
      if (rows.at(-1)![0] === "finish") finishes++;
    });
    expect(finishes).toBeGreaterThan(0);
  });

  it("scales y from 0 to the largest of the budget and the token counts", () => {
    const r = report({
      traces: [
        trace("at-max", 10000, { tokensIn: [2000, 10000, 5000], tokensOut: [2000, 8000, 5000] }),
        trace("half", 5000, { tokensIn: [2000, 10000, 0], tokensOut: [2000, 4000, 0] }),
        trace("above-all", 20000, { tokensIn: [1000, 4000] }),
      ],
    });
    const [atMax, half, aboveAll] = svgs(renderHtmlReport(r));
    const area = (svg: string) => {
      const rect = tags(svg, "rect", "plot-area")[0];
      return { top: num(rect, "y"), bottom: num(rect, "y") + num(rect, "height"), left: num(rect, "x"), right: num(rect, "x") + num(rect, "width") };
    };
    const budgetY = (svg: string) => {
      const [line] = tags(svg, "line", "budget");
      expect(num(line, "y1")).toBe(num(line, "y2"));
      return num(line, "y1");
    };
    const a = area(atMax);
    expect(budgetY(atMax)).toBe(a.top);
    const [budgetLine] = tags(atMax, "line", "budget");
    expect([num(budgetLine, "x1"), num(budgetLine, "x2")]).toEqual([a.left, a.right]);
    // The largest input sits on the budget line; the output of 8000 at 80% of the height.
    const pts = (svg: string, cls: string) =>
      attr(tags(svg, "polyline", cls)[0], "points")
        .split(" ")
        .map((p) => p.split(",").map(Number));
    expect(pts(atMax, "tokens-in")[1][1]).toBe(a.top);
    expect(pts(atMax, "tokens-out")[1][1]).toBeCloseTo(a.bottom - 0.8 * (a.bottom - a.top), 0);
    // A budget of half the largest count: the middle; zero tokens: the bottom.
    const h = area(half);
    expect(budgetY(half)).toBeCloseTo((h.top + h.bottom) / 2, 0);
    expect(pts(half, "tokens-in")[2][1]).toBe(h.bottom);
    expect(pts(half, "tokens-in")[1][1]).toBe(h.top);
    // A budget above every count is the top; the first and last points span the width.
    const t = area(aboveAll);
    expect(budgetY(aboveAll)).toBe(t.top);
    expect(pts(aboveAll, "tokens-in")[1][1]).toBeCloseTo(t.bottom - 0.2 * (t.bottom - t.top), 0);
    expect(pts(aboveAll, "tokens-in").map(([x]) => x)).toEqual([t.left, t.right]);
  });
});

// ---------------------------------------------------------------------------------------------
// Headless Chromium

/** Debian's chromium (installed by .ci/run when missing), or null. */
const chromium = findExecutable(["chromium", "chromium-browser"]);

interface RenderCheck {
  traces: {
    run: string;
    budget: number;
    width: number;
    height: number;
    tokensIn: { count: number; width: number; height: number };
    tokensOut: { count: number; width: number; height: number };
    epochLines: number;
    epochLinesDrawn: number;
    epochLabels: { count: number; overlaps: number; minGap: number | null; right: number | null };
    budgetLine: { width: number; fromTop: number | null } | null;
  }[];
  tables: { budget: number; rows: number; rowsLaidOut: number; width: number }[];
  frontier?: { width: number; points: number; markersDrawn: number; labels: number };
}

/** Loads `file` in headless Chromium and returns its DOM after the scripts ran. */
function dumpDom(file: string, profile: string): Promise<string> {
  const args = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-extensions",
    "--disable-background-networking",
    `--user-data-dir=${profile}`,
    "--window-size=1280,2000",
    "--virtual-time-budget=2000",
    "--dump-dom",
    pathToFileURL(file).href,
  ];
  return new Promise((resolve, reject) => {
    execFile(chromium!, args, { timeout: 60_000, maxBuffer: 64 << 20, encoding: "utf8" }, (err, stdout, stderr) => {
      if (err) reject(new Error(`chromium failed: ${err.message}\n${stderr.slice(-2000)}`));
      else resolve(stdout);
    });
  });
}

describe.skipIf(!chromium)(`the report in headless Chromium${chromium ? "" : " — skipped: chromium not installed (.ci/run installs it)"}`, () => {
  const dir = mkdtempSync(join(tmpdir(), "ctxfold-html-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("lays out the tables and draws every plot's lines, budget line and epoch markers", async () => {
    const tokensIn = Array.from({ length: 30 }, (_, i) => 1500 + 400 * i);
    const r = report({
      traces: [
        trace('<run&"1">', 8000, {
          tokensIn,
          tokensOut: tokensIn.map((t, i) => (i === 20 ? null : Math.min(t, 6000 + (i % 5) * 300))),
          newEpochAt: [16, 24],
          epochs: [epochOf(1, 16, ["ref:1"]), epochOf(2, 24, ["ref:2", "ref:3"])],
        }),
        trace("run-2", 32000, { tokensIn: [4000, 32000, 12000, 20000], tokensOut: [4000, 30000, 12000, 18000] }),
        trace("run-3", 8000, { tokensIn: [100, 900, 3000], newEpochAt: [2] }),
        // 40 epochs, one every point: far more than the labels that fit.
        trace("dense", 8000, { tokensIn: Array.from({ length: 40 }, (_, i) => 1000 + 300 * i), newEpochAt: Array.from({ length: 40 }, (_, i) => i) }),
      ],
    });
    const file = join(dir, "report.html");
    writeFileSync(file, renderHtmlReport(r));
    const dom = await dumpDom(file, join(dir, "profile"));

    const raw = /<pre id="render-check" hidden="">([^<]*)<\/pre>/.exec(dom)?.[1];
    expect(raw, "the render check did not run (script blocked or page not loaded)").toBeTruthy();
    const check = JSON.parse(decodeURIComponent(raw!)) as RenderCheck;

    expect(check.tables.map((t) => t.budget)).toEqual([8000, 32000]);
    for (const t of check.tables) {
      expect(t.rows).toBe(3);
      expect(t.rowsLaidOut).toBe(3);
      expect(t.width).toBeGreaterThan(0);
    }

    // The frontier: a marker drawn and a label for each contender × budget.
    expect(check.frontier).toMatchObject({ points: 6, markersDrawn: 6, labels: 6 });
    expect(check.frontier!.width).toBeGreaterThan(0);

    expect(check.traces.map((t) => [t.run, t.budget])).toEqual([
      ['<run&"1">', 8000],
      ["run-2", 32000],
      ["run-3", 8000],
      ["dense", 8000],
    ]);
    for (const t of check.traces) {
      expect(t.width).toBeGreaterThan(0);
      expect(t.height).toBeGreaterThan(0);
      expect(t.tokensIn.count).toBe(1);
      expect(t.tokensIn.width).toBeGreaterThan(0);
      expect(t.tokensIn.height).toBeGreaterThan(0);
      expect(t.tokensOut.width).toBeGreaterThan(0);
      expect(t.tokensOut.height).toBeGreaterThan(0);
      expect(t.budgetLine?.width).toBeGreaterThan(0);
      expect(t.epochLinesDrawn).toBe(t.epochLines);
    }
    const [first, second, third, dense] = check.traces;
    // The null output at point 20 splits the output line in two.
    expect(first.tokensOut.count).toBe(2);
    expect([first.epochLines, second.epochLines, third.epochLines, dense.epochLines]).toEqual([2, 0, 1, 40]);
    // Epoch labels as the browser laid them out: none overlaps its neighbour, the last within the plot.
    for (const t of check.traces) {
      expect(t.epochLabels.overlaps, t.run).toBe(0);
      if (t.epochLabels.count > 1) expect(t.epochLabels.minGap!).toBeGreaterThan(0);
      if (t.epochLabels.count > 0) expect(t.epochLabels.right!).toBeLessThanOrEqual(0);
    }
    expect(dense.epochLabels.count).toBeGreaterThan(3);
    expect(dense.epochLabels.count).toBeLessThan(40);
    // The budget line where the scale puts it, as laid out: 8000 of 13100 from the bottom; the
    // budget equal to the largest count on the top edge; a budget above every count too.
    expect(first.budgetLine!.fromTop!).toBeCloseTo(1 - 8000 / 13100, 2);
    expect(second.budgetLine!.fromTop!).toBeCloseTo(0, 2);
    expect(third.budgetLine!.fromTop!).toBeCloseTo(0, 2);

    // The escaped run id came back as text, not markup.
    expect(dom).not.toContain('<run&"1">');
    expect(dom).toContain('&lt;run&amp;"1"&gt;');
  }, 90_000);
});
