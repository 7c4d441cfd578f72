/**
 * `ctxfold eval` as a library: score compaction on recorded runs. `evaluate` takes runs
 * as OpenAI Chat messages (the wire every contender is measured in; the CLI converts other
 * formats through the adapters) and the lines that could not be used, replays them through
 * ctxfold (a config, and optionally a second one to compare), the tail baseline (what a careful
 * hand-written trimmer does: the bar to clear, always measured) and the peers asked for, and
 * returns the report that `--json` prints and `--html` draws.
 */
import type { CompactorConfig } from "../policy/index.js";
import { ctxfold, loadPeers, type Contender } from "./contenders.js";
import { tailBaseline } from "./tail-baseline.js";
import { promptPoints, replayRuns, type EvalRun } from "./replay.js";
import { checkThresholds, type Threshold } from "./thresholds.js";
import type { EvalReport, FailedRun } from "./types.js";
import { kPricing, type Pricing } from "./metrics.js";
import { budgetRows, sourcesReport } from "./sources.js";

export type { EvalMetrics, EvalReport, FailedRun, ThresholdResult, TraceEpoch, TracePoint, TraceRun } from "./types.js";
export type { StageFigures } from "../policy/stage-rows.js";
export { checkThresholds, describeMisses, kThresholdMetrics, parseThresholds, type Threshold, type ThresholdMetric } from "./thresholds.js";
export { kPeers, loadPeers, ctxfold as ctxfoldContender, type CompactOutput, type Contender, type PeerName } from "./contenders.js";
export { tailBaseline, trimTail } from "./tail-baseline.js";
export { promptPoints, replayRuns, traceRun, type EvalRun, type InfeasibleRun, type MetricGrid, type ReplayOptions, type ReplayResult } from "./replay.js";
export * as metrics from "./metrics.js";
export * as evidence from "./evidence.js";
export { MissTally, missKind, recordMisses, type MissExample, type MissKind, type MissReport, type MissRow, type MissStage } from "./misses.js";
export { kPricing, parsePricing, type Pricing } from "./metrics.js";
export { readConfigFile, type ConfigFileSettings } from "../policy/config-file.js";
export {
  kSourceMetrics,
  kUnnamedSource,
  sourceOf,
  sourcesReport,
  worstSources,
  type Direction,
  type SourceGroup,
  type SourcesReport,
  type WorstSource,
} from "./sources.js";

export interface EvaluateOptions {
  /** The input's name in the report. */
  input: string;
  /** The budgets every run is replayed at. */
  budgets: number[];
  /** At most this many prompt points per run. @default 40 */
  points?: number;
  /** The ctxfold config evaluated (thresholds apply to it). @default {} (every setting's default) */
  config?: Omit<CompactorConfig, "store">;
  /** The config's name in the report. @default "ctxfold" (and no config name in the report's options) */
  configName?: string;
  /** A second config, side by side. @default none */
  compare?: { config: Omit<CompactorConfig, "store">; name: string };
  /** Peers: langchain, mastra, ai-sdk. @default none */
  against?: readonly string[];
  /** More contenders (tests; the bench's "no compaction" baseline). @default none */
  extraContenders?: readonly Contender[];
  /** Runs to trace for the report: ids, or how many of the runs with the most prompt points. @default 2 */
  trace?: number | readonly string[];
  /** Thresholds the first contender's metrics are checked against (the report's `thresholds`). @default none */
  thresholds?: readonly Threshold[];
  /** Prices of cached and uncached input tokens for the cost metric. @default kPricing.anthropic */
  pricing?: Pricing;
  /** Diagnose why the evaluated config's prompts lacked evidence terms (the report's `misses`, misses.ts). @default false */
  misses?: boolean;
  /** After each run: runs done, of how many, and the prompts replayed so far. @default none */
  onProgress?: (done: number, total: number, prompts: number) => void;
}

/** Replays `runs` and builds the report (see the module comment). */
export async function evaluate(runs: readonly EvalRun[], failedRuns: readonly FailedRun[], options: EvaluateOptions): Promise<EvalReport> {
  const primary = await ctxfold(options.config ?? {}, options.configName ?? "ctxfold");
  const contenders: Contender[] = [primary];
  if (options.compare) contenders.push(await ctxfold(options.compare.config, options.compare.name));
  contenders.push(tailBaseline());
  const { contenders: peers, notes } = await loadPeers(options.against ?? []);
  contenders.push(...peers, ...(options.extraContenders ?? []));
  const points = options.points ?? 40;
  const trace = Array.isArray(options.trace)
    ? options.trace
    : [...runs]
        .sort((a, b) => promptPoints(b.messages).length - promptPoints(a.messages).length)
        .slice(0, (options.trace as number | undefined) ?? 2)
        .map((r) => r.id);
  const pricing = options.pricing ?? kPricing.anthropic;
  const r = await replayRuns(runs, contenders, {
    budgets: options.budgets,
    points,
    trace,
    pricing,
    ...(options.misses ? { misses: true } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  const budgets = budgetRows(r.metrics, options.budgets, contenders);
  return {
    ctxfold: "eval",
    version: 1,
    date: new Date().toISOString(),
    node: process.version,
    input: options.input,
    options: {
      budgets: options.budgets,
      points,
      ...(options.configName ? { config: options.configName } : {}),
      ...(options.compare ? { compare: options.compare.name } : {}),
      against: [...(options.against ?? [])],
      pricing,
    },
    corpus: { runs: runs.length, prompts: r.prompts, pairs: r.pairs },
    contenders: contenders.map((c) => ({ name: c.name, version: c.version, note: c.note })),
    notes,
    failedRuns: [...failedRuns],
    infeasibleRuns: r.infeasibleRuns,
    budgets,
    sources: sourcesReport(r.sources, options.budgets, contenders),
    traces: r.traces,
    thresholds: options.thresholds
      ? checkThresholds(
          options.thresholds,
          budgets.map((b) => ({ budget: b.budget, metrics: b.rows[0].metrics })),
          primary.name,
        )
      : [],
    ...(r.misses ? { misses: r.misses } : {}),
  };
}
