/**
 * What one contender scores at one budget over the replay (replay.ts): a Tally accumulates the
 * measures of each prompt point it is called at (metrics.ts defines each), and summary turns it
 * into the report's EvalMetrics.
 */
import { openaiChatAdapter } from "../adapters/index.js";
import type { OpenAIChatMessage } from "../adapters/openai-chat.js";
import { newViolations, validate, type Issue, type ValidationResult } from "../validate/index.js";
import { kCounter, messageTokens, promptTokens } from "./tokens.js";
import type { CompactOutput } from "./protocol.js";
import { evidenceKept } from "./evidence.js";
import {
  cachePricedCost,
  prefixShare,
  prefixSplit,
  type Pricing,
  criticalVerbatim,
  failedVisible,
  kCriticalKinds,
  percentile,
  recoverable,
  type CriticalKind,
} from "./metrics.js";
import type { EvalMetrics } from "./types.js";

/** One prompt point of a run, with what every contender's measurement shares. */
export interface Point {
  runId: string;
  input: OpenAIChatMessage[];
  withPrev: boolean;
  tokens: number;
  /** The input messages' tokens without the reply primer: what the uncompacted prompt is priced by. */
  messageTokens: number;
  criticalTokens: number;
  validation: ValidationResult;
  failed: { message: OpenAIChatMessage; head: string }[];
  /** Prompt points the sample skipped since the previous sampled point (message counts), for stateful contenders. */
  skipped: number[];
  /** What the next assistant message named from the trajectory (evidence.ts); only for points above some budget. */
  evidence: string[];
}

/** What one contender scored at one budget, as it accumulates. */
export class Tally {
  prompts = 0;
  errors = 0;
  errorSamples: string[] = [];
  failedMissSamples: string[] = [];
  overBudget = 0;
  criticalFits = 0;
  withinWhereCriticalFits = 0;
  feasible = 0;
  infeasible = 0;
  infeasibleWhereCriticalFits = 0;
  violationPrompts = 0;
  violationCodes: Record<string, number> = {};
  criticalAll = 0;
  criticalKinds = Object.fromEntries(kCriticalKinds.map((k) => [k, { verbatim: 0, of: 0 }])) as Record<CriticalKind, { verbatim: number; of: number }>;
  failed = 0;
  failedVisible = 0;
  recover?: { affectedBytes: number; recoveredBytes: number; refs: number; refsResolved: number };
  compression: number[] = [];
  evidence = { prompts: 0, terms: 0, kept: 0 };
  cost = { sum: 0, uncompacted: 0, pairs: 0 };
  /** Each pair's cost and uncompacted cost, in order: what addTally sums into another tally exactly as countPair would. */
  pairCosts: { cost: number; uncompacted: number }[] = [];
  fill: number[] = [];
  cache: number[] = [];
  cacheOverBudget: number[] = [];
  latencyMs: number[] = [];
  anomalies: Record<string, number> = {};
}

/** How many error and failed-result miss samples a tally keeps. */
const kErrorSamples = 3;
const kMissSamples = 5;

const sameArray = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Counts a prompt point: every call, also one that threw (which then scores as not within budget). */
export function countPoint(t: Tally, p: Point, budget: number): boolean {
  const fits = p.criticalTokens <= budget;
  t.prompts++;
  if (p.tokens > budget) t.overBudget++;
  if (fits) t.criticalFits++;
  return fits;
}

/** Counts a call that threw at `p` (the first lines of a few errors kept as samples). */
export function countError(t: Tally, p: Point, budget: number, runId: string, e: unknown): void {
  countPoint(t, p, budget);
  t.errors++;
  if (t.errorSamples.length < kErrorSamples) t.errorSamples.push(`${runId}: ${(e as Error).message?.split("\n")[0]}`);
}

/**
 * Measures one answer `r` at prompt point `p`: a refusal counts as infeasible and nothing more;
 * an output, by its size against the budget, what it breaks of the provider rules, the critical
 * messages and failed results it keeps, and what its refs recover.
 */
export function measure(t: Tally, p: Point, budget: number, r: CompactOutput): void {
  const fits = countPoint(t, p, budget);
  if (r.anomaly) t.anomalies[r.anomaly] = (t.anomalies[r.anomaly] ?? 0) + 1;
  if (r.infeasible) {
    t.infeasible++;
    if (fits) t.infeasibleWhereCriticalFits++;
    return;
  }
  const out = r.messages;
  const tokens = promptTokens(out);
  t.feasible++;
  if (tokens <= budget && fits) t.withinWhereCriticalFits++;
  if (p.tokens > budget) countOverBudget(t, p, budget, tokens, out);
  // Provider rules: only what the output breaks that the input did not.
  if (!sameArray(out, p.input)) countViolations(t, p, out);
  countCritical(t, p.input, out);
  countFailed(t, p, out);
  if (r.refs) countRecovery(t, p.input, out, r);
}

/** At a point over the budget: how much the output kept of the input and of the budget, and of the next step's evidence. */
function countOverBudget(t: Tally, p: Point, budget: number, tokens: number, out: OpenAIChatMessage[]): void {
  t.compression.push(tokens / p.tokens);
  t.fill.push(tokens / budget);
  if (p.evidence.length > 0) {
    t.evidence.prompts++;
    t.evidence.terms += p.evidence.length;
    t.evidence.kept += evidenceKept(p.evidence, out);
  }
}

/** The provider rules the output breaks that the input kept, by code (an output that does not parse breaks one). */
function countViolations(t: Tally, p: Point, out: OpenAIChatMessage[]): void {
  // A validator's issues, or the one of an output that does not parse (a code of eval's own).
  let issues: { code: string; severity: Issue["severity"]; message: string }[];
  try {
    issues = newViolations(p.validation, validate(openaiChatAdapter.parse(out), "openai-chat"));
  } catch (e) {
    issues = [{ code: "UNPARSABLE", severity: "error", message: (e as Error).message }];
  }
  let errors = 0;
  for (const i of issues) {
    if (i.severity !== "error") continue;
    t.violationCodes[i.code] = (t.violationCodes[i.code] ?? 0) + 1;
    errors++;
  }
  if (errors > 0) t.violationPrompts++;
}

/** The critical messages of the input the output keeps verbatim, per kind and all at once. */
function countCritical(t: Tally, input: OpenAIChatMessage[], out: OpenAIChatMessage[]): void {
  const critical = criticalVerbatim(input, out);
  let all = true;
  for (const [kind, ok] of Object.entries(critical) as [CriticalKind, boolean][]) {
    t.criticalKinds[kind].of++;
    if (ok) t.criticalKinds[kind].verbatim++;
    else all = false;
  }
  if (all) t.criticalAll++;
}

/** The failed tool results whose failure the output still shows (a few misses kept as samples). */
function countFailed(t: Tally, p: Point, out: OpenAIChatMessage[]): void {
  for (const f of p.failed) {
    t.failed++;
    if (failedVisible(f.message, out, f.head)) t.failedVisible++;
    else if (t.failedMissSamples.length < kMissSamples)
      t.failedMissSamples.push(
        `${p.runId}@${p.input.length}: ${f.message.role === "tool" ? f.message.tool_call_id : ""} head=${JSON.stringify(f.head.slice(0, 60))}`,
      );
  }
}

/** The refs of the answer that resolve, and how much of what the output changed their contents give back. */
function countRecovery(t: Tally, input: OpenAIChatMessage[], out: OpenAIChatMessage[], r: CompactOutput): void {
  t.recover ??= { affectedBytes: 0, recoveredBytes: 0, refs: 0, refsResolved: 0 };
  const stored: string[] = [];
  for (const ref of r.refs!) {
    t.recover.refs++;
    try {
      stored.push(r.resolve!(ref));
      t.recover.refsResolved++;
    } catch {
      // unresolved: counted by refs - refsResolved
    }
  }
  const { affected, recovered } = recoverable(input, out, stored);
  t.recover.affectedBytes += affected;
  t.recover.recoveredBytes += recovered;
}

const kPrefixCounter = { message: messageTokens, text: (s: string) => kCounter.exact(s) };

/**
 * Counts a call with the one just before it (`prev`, both answered): the prompt prefix it shares
 * (the cache-prefix metric) and, over the budget, what the pair costs at `pricing` against the
 * uncompacted prompt.
 */
export function countPair(t: Tally, p: Point, budget: number, prev: OpenAIChatMessage[], out: OpenAIChatMessage[], pricing: Pricing): void {
  const split = prefixSplit(prev, out, kPrefixCounter);
  const s = prefixShare(split);
  t.cache.push(s);
  if (p.tokens > budget) {
    t.cacheOverBudget.push(s);
    addPairCost(t, { cost: cachePricedCost(split, pricing), uncompacted: p.messageTokens * pricing.write });
  }
}

function addPairCost(t: Tally, pair: { cost: number; uncompacted: number }): void {
  t.cost.pairs++;
  t.cost.sum += pair.cost;
  t.cost.uncompacted += pair.uncompacted;
  t.pairCosts.push(pair);
}

/** The plain counters of a tally, which add up. */
const kCounters = [
  "prompts",
  "errors",
  "overBudget",
  "criticalFits",
  "withinWhereCriticalFits",
  "feasible",
  "infeasible",
  "infeasibleWhereCriticalFits",
  "violationPrompts",
  "criticalAll",
  "failed",
  "failedVisible",
] as const satisfies readonly (keyof Tally)[];

const addCounts = (into: Record<string, number>, from: Record<string, number>) => {
  for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
};
const addSamples = (into: string[], from: readonly string[], max: number) => {
  for (const s of from) if (into.length < max) into.push(s);
};

/**
 * Adds `from`, a later stretch of points (one run's), to `into` as if they had been counted there
 * after its own: every count, sample, sum and sequence comes out as counting them directly
 * would, to the last bit, so a pooled tally and a per-source one can both be built from each
 * run's.
 */
export function addTally(into: Tally, from: Tally): void {
  for (const k of kCounters) into[k] += from[k];
  addSamples(into.errorSamples, from.errorSamples, kErrorSamples);
  addSamples(into.failedMissSamples, from.failedMissSamples, kMissSamples);
  addCounts(into.violationCodes, from.violationCodes);
  addCounts(into.anomalies, from.anomalies);
  for (const k of kCriticalKinds) {
    into.criticalKinds[k].verbatim += from.criticalKinds[k].verbatim;
    into.criticalKinds[k].of += from.criticalKinds[k].of;
  }
  if (from.recover) {
    into.recover ??= { affectedBytes: 0, recoveredBytes: 0, refs: 0, refsResolved: 0 };
    addCounts(into.recover, from.recover);
  }
  addCounts(into.evidence, from.evidence);
  for (const pair of from.pairCosts) addPairCost(into, pair);
  into.compression.push(...from.compression);
  into.fill.push(...from.fill);
  into.cache.push(...from.cache);
  into.cacheOverBudget.push(...from.cacheOverBudget);
  into.latencyMs.push(...from.latencyMs);
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const share = (a: number, b: number) => (b === 0 ? null : a / b);
const finite = (x: number) => (Number.isFinite(x) ? x : null);

/** The metrics a tally sums up to. */
export function summary(t: Tally): EvalMetrics {
  const spentMs = t.latencyMs.reduce((a, b) => a + b, 0);
  const answered = t.prompts - t.errors - t.infeasible;
  return {
    prompts: t.prompts,
    overBudget: t.overBudget,
    criticalFits: t.criticalFits,
    withinBudget: share(t.withinWhereCriticalFits, t.criticalFits),
    infeasible: t.infeasible,
    infeasibleWhereCriticalFits: t.infeasibleWhereCriticalFits,
    errors: t.errors,
    errorSamples: t.errorSamples,
    newViolationPrompts: t.violationPrompts,
    newViolationCodes: t.violationCodes,
    violationFree: share(answered - t.violationPrompts, answered),
    criticalVerbatim: share(t.criticalAll, t.feasible),
    criticalVerbatimByKind: Object.fromEntries(kCriticalKinds.map((k) => [k, share(t.criticalKinds[k].verbatim, t.criticalKinds[k].of)])),
    failedResults: t.failed,
    failedVisible: share(t.failedVisible, t.failed),
    failedMissSamples: t.failedMissSamples,
    recoverable: t.recover ? (t.recover.affectedBytes === 0 ? 1 : t.recover.recoveredBytes / t.recover.affectedBytes) : null,
    refs: t.recover ? { total: t.recover.refs, unresolved: t.recover.refs - t.recover.refsResolved } : null,
    compression: mean(t.compression),
    evidenceRecall: share(t.evidence.kept, t.evidence.terms),
    evidence: { ...t.evidence },
    costPerCall: t.cost.pairs ? t.cost.sum / t.cost.pairs : null,
    costSavings: t.cost.pairs && t.cost.uncompacted > 0 ? 1 - t.cost.sum / t.cost.uncompacted : null,
    costPairs: t.cost.pairs,
    budgetFill: { p50: finite(percentile(t.fill, 50)), p95: finite(percentile(t.fill, 95)) },
    cachePrefix: mean(t.cache),
    cachePrefixOverBudget: mean(t.cacheOverBudget),
    cachePrefixPairs: t.cache.length,
    latencyMs: { p50: finite(percentile(t.latencyMs, 50)), p99: finite(percentile(t.latencyMs, 99)) },
    throughput: spentMs > 0 ? t.latencyMs.length / (spentMs / 1000) : null,
    anomalies: t.anomalies,
  };
}
