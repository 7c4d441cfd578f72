/**
 * `--fail-under metric=value,…`: thresholds a CI run of `ctxfold eval` must meet. Each is
 * checked for the evaluated ctxfold config (the first contender) at every budget; a metric that
 * could not be measured (null: no failed results to keep visible, no over-budget prompt…) fails,
 * since a gate that passes on nothing proves nothing. Values are fractions (0.85) or percentages
 * (85%); throughput is prompts per second.
 */
import { CtxfoldError } from "../errors.js";
import type { EvalMetrics, ThresholdResult } from "./types.js";

/** The metrics a threshold may name, each as a higher-is-better number. */
export const kThresholdMetrics = {
  within_budget: (m: EvalMetrics) => m.withinBudget,
  violation_free: (m: EvalMetrics) => m.violationFree,
  critical_verbatim: (m: EvalMetrics) => m.criticalVerbatim,
  failed_visible: (m: EvalMetrics) => m.failedVisible,
  recoverable: (m: EvalMetrics) => m.recoverable,
  /** 1 − compression: the share of over-budget input tokens removed. */
  savings: (m: EvalMetrics) => (m.compression === null ? null : 1 - m.compression),
  evidence_recall: (m: EvalMetrics) => m.evidenceRecall,
  /** 1 − cache-priced cost over the uncompacted inputs' uncached cost (what caching and compaction save together). */
  cost_savings: (m: EvalMetrics) => m.costSavings,
  /** Median output tokens / budget over the points above it. */
  budget_fill: (m: EvalMetrics) => m.budgetFill.p50,
  cache_prefix: (m: EvalMetrics) => m.cachePrefix,
  cache_prefix_over_budget: (m: EvalMetrics) => m.cachePrefixOverBudget,
  throughput: (m: EvalMetrics) => m.throughput,
} as const satisfies Record<string, (m: EvalMetrics) => number | null>;
export type ThresholdMetric = keyof typeof kThresholdMetrics;

export interface Threshold {
  metric: ThresholdMetric;
  value: number;
}

/** Parses `within_budget=1,cache_prefix=0.85,failed_visible=100%`; E_BAD_INPUT naming the bad item. */
export function parseThresholds(spec: string): Threshold[] {
  const out: Threshold[] = [];
  for (const item of spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-z_]+)\s*=\s*([0-9]*\.?[0-9]+)(%?)$/.exec(item);
    if (!m)
      throw new CtxfoldError("E_BAD_INPUT", `expected metric=value (e.g. within_budget=1 or cache_prefix=85%), got ${JSON.stringify(item)}`, {
        path: "fail-under",
      });
    if (!Object.hasOwn(kThresholdMetrics, m[1])) {
      throw new CtxfoldError("E_BAD_INPUT", `unknown metric ${JSON.stringify(m[1])} (one of ${Object.keys(kThresholdMetrics).join(", ")})`, {
        path: "fail-under",
      });
    }
    const value = Number(m[2]) / (m[3] ? 100 : 1);
    out.push({ metric: m[1] as ThresholdMetric, value });
  }
  if (out.length === 0) throw new CtxfoldError("E_BAD_INPUT", "expected at least one metric=value", { path: "fail-under" });
  return out;
}

/** Every threshold at every budget for `contender`; ok when the value is at least the threshold. */
export function checkThresholds(
  thresholds: readonly Threshold[],
  budgets: readonly { budget: number; metrics: EvalMetrics }[],
  contender: string,
): ThresholdResult[] {
  const out: ThresholdResult[] = [];
  for (const { budget, metrics } of budgets) {
    for (const t of thresholds) {
      const value = kThresholdMetrics[t.metric](metrics);
      // A share of 0.99999999 computed from 1 − ε is still 100%: compare at 1e-9.
      out.push({ metric: t.metric, threshold: t.value, budget, contender, value, ok: value !== null && value >= t.value - 1e-9 });
    }
  }
  return out;
}

/** One line per missed threshold: metric, budget, value and threshold. */
export function describeMisses(results: readonly ThresholdResult[]): string[] {
  const show = (metric: string, v: number) => (metric === "throughput" ? `${v.toFixed(1)}/s` : `${(v * 100).toFixed(2).replace(/\.?0+$/, "")}%`);
  return results
    .filter((r) => !r.ok)
    .map(
      (r) =>
        `${r.metric} at budget ${r.budget}: ${r.value === null ? "n/a (nothing to measure)" : show(r.metric, r.value)} < ${show(r.metric, r.threshold)} (${r.contender})`,
    );
}
