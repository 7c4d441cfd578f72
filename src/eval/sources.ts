/**
 * Metrics per source: a corpus pools runs of several agent families (a SWE-bench agent, a
 * customer-service agent, Claude Code sessions, Aider chats…), and a pooled share can hide the
 * family where compaction does worst. The eval reports every metric per source group as well as
 * pooled, and names the worst source of each metric.
 *
 * The grouping rule (`sourceOf`): a run's source is its id up to the first "/"
 * (`tau-gpt4o-airline/task9-3` → `tau-gpt4o-airline`, `cc-hook/owner__repo/…` → `cc-hook`);
 * an id without "/" is its own source, whole; a run without an id is in the source "unnamed".
 *
 * The worst source of a metric (`worstSources`) is, among the sources where it was measured (not
 * null), the one with the lowest value for a higher-is-better metric (the --fail-under metrics:
 * evidence recall, within budget…), the highest for a lower-is-better one (cost per call); ties
 * go to the source that comes first. A metric every source reads alike (within budget at 100%
 * everywhere), or that fewer than two sources measured, has no worst source.
 */
import type { Contender } from "./protocol.js";
import type { EvalMetrics, EvalReport, MetricGrid, SourceGroup, SourcesReport, WorstSource } from "./types.js";
import { kThresholdMetrics } from "./thresholds.js";

/** The source of a run without an id. */
export const kUnnamedSource = "unnamed";

/** A run's source group: its id up to the first "/", the whole id without one, "unnamed" without an id. */
export function sourceOf(id: string | undefined): string {
  if (id === undefined || id === "") return kUnnamedSource;
  const slash = id.indexOf("/");
  return slash > 0 ? id.slice(0, slash) : id;
}

export type { SourceGroup, SourcesReport, WorstSource } from "./types.js";

/** Which way a metric is better. */
export type Direction = WorstSource["better"];

/**
 * The metrics a worst source is named for, by name and which way is better: the --fail-under
 * metrics (higher is better) but throughput, a measure of the machine more than of a source, and
 * the cost per call (lower is better).
 */
export const kSourceMetrics: Record<string, { read: (m: EvalMetrics) => number | null; better: Direction }> = {
  ...Object.fromEntries(
    Object.entries(kThresholdMetrics)
      .filter(([name]) => name !== "throughput")
      .map(([name, read]) => [name, { read, better: "higher" as Direction }]),
  ),
  cost_per_call: { read: (m) => m.costPerCall, better: "lower" },
};

/** The source where `read` is worst (see the module comment) among the groups' metrics; undefined when they do not differ. */
function worstOf(entries: readonly { source: string; metrics: EvalMetrics }[], read: (m: EvalMetrics) => number | null, better: Direction) {
  let worst: { source: string; value: number } | undefined;
  let differ = false;
  for (const { source, metrics } of entries) {
    const value = read(metrics);
    if (value === null) continue;
    if (worst && value !== worst.value) differ = true;
    if (!worst || (better === "higher" ? value < worst.value : value > worst.value)) worst = { source, value };
  }
  return differ ? worst : undefined;
}

/** A metric grid (replayRuns') as the report lays it out: per budget, a row per contender. */
export function budgetRows(grid: MetricGrid, budgets: readonly number[], contenders: readonly Contender[]): EvalReport["budgets"] {
  return budgets.map((budget) => ({ budget, rows: contenders.map((c) => ({ contender: c.name, metrics: grid.get(budget)!.get(c)! })) }));
}

/** replayRuns' per-source grids as the report's sources section: every group, and the worst source of each metric. */
export function sourcesReport(
  sources: readonly { source: string; runs: number; metrics: MetricGrid }[],
  budgets: readonly number[],
  contenders: readonly Contender[],
): SourcesReport {
  const groups = sources.map((g) => ({ source: g.source, runs: g.runs, budgets: budgetRows(g.metrics, budgets, contenders) }));
  return { groups, worst: worstSources(groups) };
}

/** The worst source per budget, contender and metric of kSourceMetrics (where the sources differ). */
export function worstSources(groups: readonly SourceGroup[]): WorstSource[] {
  const out: WorstSource[] = [];
  const first = groups[0];
  if (!first) return out;
  first.budgets.forEach(({ budget, rows }, b) => {
    rows.forEach(({ contender }, c) => {
      const entries = groups.map((g) => ({ source: g.source, metrics: g.budgets[b].rows[c].metrics }));
      for (const [metric, { read, better }] of Object.entries(kSourceMetrics)) {
        const worst = worstOf(entries, read, better);
        if (worst) out.push({ budget, contender, metric, better, ...worst });
      }
    });
  });
  return out;
}
