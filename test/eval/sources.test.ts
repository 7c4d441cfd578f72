// Metrics per source: the grouping rule, per-source tallies that equal a replay of the source's
// runs alone (and a pooled tally built run by run), and the worst source of each metric.
import { describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { evaluate, kSourceMetrics, sourceOf, worstSources, type EvalMetrics, type EvalRun, type SourceGroup } from "../../src/eval/index.js";
import { renderHtmlReport } from "../../src/eval/html.js";
import { tailBaseline } from "../../src/eval/tail-baseline.js";
import { replayRuns } from "../../src/eval/replay.js";
import { summary, Tally } from "../../src/eval/tally.js";
import { generateRun } from "../../src/gen/run.js";

/** Metrics without what the machine's speed decides. */
const untimed = ({ latencyMs: _l, throughput: _t, ...rest }: EvalMetrics) => rest;

const genRun = (id: string, seed: number): EvalRun => ({
  id,
  messages: renderMessages(generateRun({ seed, steps: 24 }).messages, "openai-chat") as OpenAIChatMessage[],
});

describe("sourceOf", () => {
  it("is the id up to the first slash, a whole id without one, 'unnamed' without an id", () => {
    expect(sourceOf("tau-gpt4o-airline/task9-3")).toBe("tau-gpt4o-airline");
    expect(sourceOf("cc-hook/conneroisu__templar/side-1")).toBe("cc-hook");
    expect(sourceOf("run-7")).toBe("run-7");
    expect(sourceOf("/leading")).toBe("/leading");
    expect(sourceOf(undefined)).toBe("unnamed");
    expect(sourceOf("")).toBe("unnamed");
  });
});

describe("per-source metrics", () => {
  const runs = [genRun("alpha/1", 1), genRun("beta/1", 2), genRun("alpha/2", 3), genRun("solo", 4)];

  it("group the runs by source, in the order the sources first appear; each group's metrics are its runs' replayed alone", async () => {
    const tail = tailBaseline();
    const opts = { budgets: [2000, 4000], points: 8 };
    const all = await replayRuns(runs, [tail], opts);
    expect(all.sources.map((s) => [s.source, s.runs])).toEqual([
      ["alpha", 2],
      ["beta", 1],
      ["solo", 1],
    ]);
    const alone = await replayRuns([runs[0], runs[2]], [tail], opts);
    for (const b of opts.budgets) {
      expect(untimed(all.sources[0].metrics.get(b)!.get(tail)!)).toEqual(untimed(alone.metrics.get(b)!.get(tail)!));
      // A source of one run: its metrics are that run's; the pooled ones count every run.
      expect(all.metrics.get(b)!.get(tail)!.prompts).toBe(all.sources.reduce((n, s) => n + s.metrics.get(b)!.get(tail)!.prompts, 0));
    }
  }, 60_000);

  it("a run's own source (EvalRun.source) wins over its id's", async () => {
    const tail = tailBaseline();
    const r = await replayRuns([{ ...runs[3], source: "unnamed" }], [tail], { budgets: [4000], points: 4 });
    expect(r.sources.map((s) => s.source)).toEqual(["unnamed"]);
  });

  it("evaluate reports them beside the pooled budgets and names the worst source of each metric", async () => {
    const report = await evaluate(runs, [], { input: "generated", budgets: [2000], points: 8, trace: 0 });
    expect(report.sources.groups.map((g) => g.source)).toEqual(["alpha", "beta", "solo"]);
    expect(report.sources.groups.map((g) => g.budgets[0].rows.map((r) => r.contender))).toEqual(Array(3).fill(["ctxfold", "tail baseline"]));
    const recall = report.sources.worst.find((w) => w.contender === "tail baseline" && w.metric === "evidence_recall")!;
    const values = report.sources.groups.map((g) => g.budgets[0].rows[1].metrics.evidenceRecall!);
    expect(recall).toMatchObject({ budget: 2000, better: "higher", value: Math.min(...values) });
    expect(recall.source).toBe(report.sources.groups[values.indexOf(Math.min(...values))].source);
    // The HTML report: a table per budget, a row per source and contender, the worst cells marked.
    const page = renderHtmlReport(report);
    expect(page.match(/<table class="metrics-by-source sources" data-budget="2000">/g)).toHaveLength(1);
    expect(page.match(/<tr data-source="[^"]*" data-contender="[^"]*">/g)).toHaveLength(6);
    const row = page.match(new RegExp(`<tr data-source="${recall.source}" data-contender="tail baseline">.*?</tr>`))![0];
    expect(row).toMatch(/<td class="share worst" data-metric="evidenceRecall" title="worst source of evidence_recall for tail baseline at this budget">/);
    expect(renderHtmlReport({ ...report, sources: { groups: report.sources.groups.slice(0, 1), worst: [] } })).not.toContain('id="sources"');
  }, 60_000);
});

describe("worstSources", () => {
  const metrics = (over: Partial<EvalMetrics>): EvalMetrics => ({ ...summary(new Tally()), ...over });
  const group = (source: string, over: Partial<EvalMetrics>): SourceGroup => ({
    source,
    runs: 1,
    budgets: [{ budget: 8000, rows: [{ contender: "ctxfold", metrics: metrics(over) }] }],
  });

  it("is the lowest of a higher-is-better metric, the highest of a lower-is-better one, the first on a tie, none where the sources do not differ", () => {
    const worst = worstSources([
      group("a", { evidenceRecall: 0.9, costPerCall: 1000, withinBudget: 1, cachePrefix: 0.5 }),
      group("b", { evidenceRecall: 0.7, costPerCall: 3000, withinBudget: 1, cachePrefix: 0.4 }),
      group("c", { evidenceRecall: null, costPerCall: 2000, withinBudget: 1, cachePrefix: 0.4 }),
    ]);
    const of = (metric: string) => worst.find((w) => w.metric === metric);
    expect(of("evidence_recall")).toEqual({ budget: 8000, contender: "ctxfold", metric: "evidence_recall", better: "higher", source: "b", value: 0.7 });
    expect(of("cost_per_call")).toMatchObject({ better: "lower", source: "b", value: 3000 });
    expect(of("cache_prefix")).toMatchObject({ source: "b", value: 0.4 });
    expect(of("within_budget")).toBeUndefined();
    expect(of("recoverable")).toBeUndefined();
    expect(of("throughput")).toBeUndefined();
    expect(Object.keys(kSourceMetrics)).toContain("evidence_recall");
  });

  it("names none for no groups, nor for one", () => {
    expect(worstSources([])).toEqual([]);
    expect(worstSources([group("a", { evidenceRecall: 0.5 })])).toEqual([]);
  });
});
