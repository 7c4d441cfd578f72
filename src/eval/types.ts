/**
 * The result of `ctxfold eval`: what `--json` prints and what the HTML report draws.
 * Shares are in [0, 1] or null when there was nothing to measure (no failed results, no
 * over-budget prompt…); a null never passes a --fail-under threshold.
 */

import type { StageFigures } from "../policy/stage-rows.js";
import type { Pricing } from "./metrics.js";
import type { MissReport } from "./misses.js";
import type { Contender } from "./protocol.js";

/** What one contender scored at one budget over every replayed prompt point. */
export interface EvalMetrics {
  /** Prompt points replayed (every call, also one that threw). */
  prompts: number;
  /** Points whose input was above the budget. */
  overBudget: number;
  /** Points whose critical messages alone fit the budget. */
  criticalFits: number;
  /** Share of the points whose critical messages fit that got an output within the budget (exact o200k). */
  withinBudget: number | null;
  /** Typed refusals (ctxfold's budget_infeasible), and those where the critical messages did fit. */
  infeasible: number;
  infeasibleWhereCriticalFits: number;
  /** Calls that threw. */
  errors: number;
  errorSamples: string[];
  /** Points whose output has an error-severity provider-rule issue the input did not have. */
  newViolationPrompts: number;
  newViolationCodes: Record<string, number>;
  /** Share of the points (with an output) whose output holds no new error-severity violation. */
  violationFree: number | null;
  /** Share of outputs keeping every critical message verbatim, and per kind. */
  criticalVerbatim: number | null;
  criticalVerbatimByKind: Record<string, number | null>;
  failedResults: number;
  /** Share of failed tool results still visible (their answer, error head or call id). */
  failedVisible: number | null;
  failedMissSamples: string[];
  /** Share of removed or shortened input bytes the contender's refs give back; null when it keeps no refs. */
  recoverable: number | null;
  /** Refs the contender returned over all points, and how many did not resolve; null when it keeps no refs. */
  refs: { total: number; unresolved: number } | null;
  /** Mean output tokens / input tokens over the points above the budget (lower is more compression). */
  compression: number | null;
  /**
   * Next-step evidence recall (evidence.ts): of the terms the agent's next message named that
   * came from the trajectory, the share the output still shows in its text, pooled over the
   * points above the budget; null when none of them has evidence.
   */
  evidenceRecall: number | null;
  evidence: { prompts: number; terms: number; kept: number };
  /**
   * Mean cache-priced input cost per call (metrics.ts cachePricedCost, at the report's pricing), in
   * input tokens, over consecutive pairs whose later prompt is above the budget.
   */
  costPerCall: number | null;
  /** 1 − the summed cost of those calls over what their uncompacted inputs cost at the write price. */
  costSavings: number | null;
  costPairs: number;
  /** Output tokens / budget over the points above the budget (nearest rank). */
  budgetFill: { p50: number | null; p95: number | null };
  /** Mean cache-prefix share of consecutive outputs, over all pairs and over the pairs above the budget. */
  cachePrefix: number | null;
  cachePrefixOverBudget: number | null;
  cachePrefixPairs: number;
  latencyMs: { p50: number | null; p99: number | null };
  /** Prompt points compacted per second of the contender's own time. */
  throughput: number | null;
  /** Oddities a peer adapter had to mend, by what, with how many points. */
  anomalies: Record<string, number>;
}

/** One replayed prompt point of a traced run. */
export interface TracePoint {
  /** Messages in the prompt (the point is before messages[messages - 1]… the agent's next call). */
  messages: number;
  tokensIn: number;
  /** Tokens of the output; null when the call refused (infeasible) or threw. */
  tokensOut: number | null;
  /** The session's epoch after this call. */
  epoch: number;
  /** Whether this call started a new epoch (compacted the whole conversation). */
  newEpoch: boolean;
}

/** What one epoch of a traced run removed: its stages and the refs new in it. */
export interface TraceEpoch {
  epoch: number;
  /** Index into TraceRun.points of the call that started it. */
  atPoint: number;
  /** The prompt's tokens before and after, as the plot draws them (this eval's count: exact o200k, OpenAI overheads). */
  tokensBefore: number;
  tokensAfter: number;
  /**
   * The call's tokens before and after by the compactor's own count (CompactResult's), which the
   * stages' figures start from and end at; absent in reports written before it was recorded.
   */
  compactor?: { tokensBefore: number; tokensAfter: number };
  /** Every stage that had a turn (stage 0 included), by the compactor's count; `stage` and `skipped` are absent in older reports. */
  stages: StageFigures[];
  refs: string[];
}

/** A run replayed at every prompt point through ctxfold at one budget, for the report's plots. */
export interface TraceRun {
  runId: string;
  budget: number;
  contender: string;
  points: TracePoint[];
  epochs: TraceEpoch[];
}

/** A run the eval could not use (schema error, not a run…): counted and listed, never a crash. */
export interface FailedRun {
  id?: string;
  /** The input file it is in, when the eval read several. */
  file?: string;
  line: number;
  code: string;
  reason: string;
}

/** A --fail-under check. */
export interface ThresholdResult {
  metric: string;
  threshold: number;
  budget: number;
  contender: string;
  value: number | null;
  ok: boolean;
}

export interface EvalReport {
  ctxfold: "eval";
  version: 1;
  date: string;
  node: string;
  input: string;
  options: { budgets: number[]; points: number; config?: string; compare?: string; against: string[]; pricing: Pricing };
  corpus: { runs: number; prompts: number; pairs: number };
  contenders: { name: string; version: string; note: string }[];
  /** One line each: a peer whose package is not installed, and the like. */
  notes: string[];
  failedRuns: FailedRun[];
  /** Runs the first contender refused (budget_infeasible) at some points of a budget. */
  infeasibleRuns: { id: string; budget: number; points: number }[];
  budgets: { budget: number; rows: { contender: string; metrics: EvalMetrics }[] }[];
  /** The budgets' metrics per source group (sources.ts: a run id's part before the first "/"), and the worst source of each metric. */
  sources: SourcesReport;
  traces: TraceRun[];
  thresholds: ThresholdResult[];
  /** Only with `--misses`: per budget, why the evaluated config's prompts lacked evidence terms (misses.ts). */
  misses?: MissReport[];
}

/** Per budget, each contender's metrics (what a replay gives, pooled or for one source). */
export type MetricGrid = Map<number, Map<Contender, EvalMetrics>>;

/** One source group's runs and metrics: the report's budgets, restricted to its runs. */
export interface SourceGroup {
  source: string;
  runs: number;
  budgets: { budget: number; rows: { contender: string; metrics: EvalMetrics }[] }[];
}

/** The source where a contender scores worst on a metric at a budget. */
export interface WorstSource {
  budget: number;
  contender: string;
  /** The --fail-under name of the metric, or `cost_per_call`. */
  metric: string;
  better: "higher" | "lower";
  source: string;
  value: number;
}

/** What the report's `sources` holds: every group, and the worst source per budget, contender and metric. */
export interface SourcesReport {
  groups: SourceGroup[];
  worst: WorstSource[];
}
