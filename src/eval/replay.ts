/**
 * The replay behind `ctxfold eval` and `npm run bench:quality`: each run is replayed prompt by
 * prompt — every index i where messages[i] is an assistant message is a point where the agent
 * called the model with messages[0..i) — through each contender at each budget, and what the
 * model would have been sent is measured (metrics.ts defines each measure). Runs with more than
 * `points` prompt points are sampled to evenly spaced consecutive pairs (samplePoints), so the
 * cache-prefix metric always compares a call with the one just before it. Every contender sees
 * the same points, in order, one run at a time; stateful contenders (ctxfold's session) are
 * reset per run and budget, and are also called, unmeasured, at the prompt points the sample
 * skips, so their epochs and prefix evolve as in a runner that calls at every step.
 *
 * Traced runs are also replayed at every prompt point (no sampling) through the first contender,
 * recording tokens in and out, epochs and what each epoch removed (the HTML report's plots).
 */
import { openaiChatAdapter } from "../adapters/index.js";
import type { OpenAIChatMessage } from "../adapters/openai-chat.js";
import { newViolations, validate, type ValidationResult } from "../validate/index.js";
import { kCounter, messageTokens, promptTokens } from "./tokens.js";
import type { CompactOutput, Contender } from "./protocol.js";
import { evidenceKept, nextStepEvidence } from "./evidence.js";
import {
  cachePricedCost, kPricing, prefixShare, prefixSplit, type Pricing, contentText, criticalCore, criticalVerbatim, failedVisible, isFailedToolResult, kCriticalKinds, percentile, recoverable, samplePoints,
  visibleHead, type CriticalKind,
} from "./metrics.js";
import type { EvalMetrics, TraceEpoch, TraceRun } from "./types.js";

export interface EvalRun {
  id: string;
  messages: OpenAIChatMessage[];
}

export interface ReplayOptions {
  budgets: number[];
  /** At most this many prompt points per run (as consecutive pairs). */
  points: number;
  /** Prices of cached and uncached input tokens for the cost metric. @default kPricing.anthropic */
  pricing?: Pricing;
  /** Runs (by id) to replay at every point through the first contender, for the report's plots. @default none */
  trace?: readonly string[];
  /** After each run: runs done, of how many. @default none */
  onProgress?: (done: number, total: number, prompts: number) => void;
}

/** A run the first contender refused at some budget (budget_infeasible), for the report's list. */
export interface InfeasibleRun {
  id: string;
  budget: number;
  points: number;
}

export interface ReplayResult {
  /** Per budget, per contender (in the order given), the metrics. */
  metrics: Map<number, Map<Contender, EvalMetrics>>;
  prompts: number;
  pairs: number;
  traces: TraceRun[];
  infeasibleRuns: InfeasibleRun[];
}

/** One prompt point of a run, with what every contender's measurement shares. */
interface Point {
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

/** `count` items spread evenly over `items` (a quick eval over part of a corpus), or all of them. */
export function spread<T>(items: readonly T[], count: number | undefined): T[] {
  if (count === undefined || count >= items.length) return [...items];
  return Array.from({ length: count }, (_, k) => items[Math.floor((k * items.length) / count)]);
}

/** Indices i where the agent called the model with messages[0..i). */
export function promptPoints(messages: readonly OpenAIChatMessage[]): number[] {
  const at: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === "assistant" && i > 0) at.push(i);
  });
  return at;
}

function preparePoints(run: EvalRun, max: number, minBudget: number): Point[] {
  const at = promptPoints(run.messages);
  let next = 0;
  return samplePoints(at.length, max).map(({ point, withPrev }) => {
    const input = run.messages.slice(0, at[point]);
    const tokens = promptTokens(input);
    const skipped = at.slice(next, point);
    next = point + 1;
    return {
      runId: run.id,
      skipped,
      input,
      withPrev,
      tokens,
      messageTokens: input.reduce((n, m) => n + messageTokens(m), 0),
      evidence: tokens > minBudget ? nextStepEvidence(input, run.messages[at[point]]) : [],
      criticalTokens: promptTokens(criticalCore(input)),
      validation: validate(openaiChatAdapter.parse(input, { source: run.id }), "openai-chat"),
      failed: input.filter(isFailedToolResult).map((message) => ({ message, head: visibleHead(contentText(message)) })),
    };
  });
}

/** What one contender scored at one budget, as it accumulates. */
class Tally {
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
  fill: number[] = [];
  cache: number[] = [];
  cacheOverBudget: number[] = [];
  latencyMs: number[] = [];
  anomalies: Record<string, number> = {};
}

const sameArray = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Counts a prompt point: every call, also one that threw (which then scores as not within budget). */
function countPoint(t: Tally, p: Point, budget: number): boolean {
  const fits = p.criticalTokens <= budget;
  t.prompts++;
  if (p.tokens > budget) t.overBudget++;
  if (fits) t.criticalFits++;
  return fits;
}

function measure(t: Tally, p: Point, budget: number, r: CompactOutput): void {
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
  if (p.tokens > budget) {
    t.compression.push(tokens / p.tokens);
    t.fill.push(tokens / budget);
    if (p.evidence.length > 0) {
      t.evidence.prompts++;
      t.evidence.terms += p.evidence.length;
      t.evidence.kept += evidenceKept(p.evidence, out);
    }
  }
  // Provider rules: only what the output breaks that the input did not.
  if (!sameArray(out, p.input)) {
    let issues;
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
  const critical = criticalVerbatim(p.input, out);
  let all = true;
  for (const [kind, ok] of Object.entries(critical) as [CriticalKind, boolean][]) {
    t.criticalKinds[kind].of++;
    if (ok) t.criticalKinds[kind].verbatim++;
    else all = false;
  }
  if (all) t.criticalAll++;
  for (const f of p.failed) {
    t.failed++;
    if (failedVisible(f.message, out, f.head)) t.failedVisible++;
    else if (t.failedMissSamples.length < 5) t.failedMissSamples.push(`${p.runId}@${p.input.length}: ${f.message.role === "tool" ? f.message.tool_call_id : ""} head=${JSON.stringify(f.head.slice(0, 60))}`);
  }
  if (r.refs) {
    t.recover ??= { affectedBytes: 0, recoveredBytes: 0, refs: 0, refsResolved: 0 };
    const stored: string[] = [];
    for (const ref of r.refs) {
      t.recover.refs++;
      try {
        stored.push(r.resolve!(ref));
        t.recover.refsResolved++;
      } catch {
        // unresolved: counted by refs - refsResolved
      }
    }
    const { affected, recovered } = recoverable(p.input, out, stored);
    t.recover.affectedBytes += affected;
    t.recover.recoveredBytes += recovered;
  }
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const share = (a: number, b: number) => (b === 0 ? null : a / b);
const finite = (x: number) => (Number.isFinite(x) ? x : null);

function summary(t: Tally): EvalMetrics {
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

const kPrefixCounter = { message: messageTokens, text: (s: string) => kCounter.exact(s) };

/** Replays `runs` through `contenders` at every budget (see the module comment). */
export async function replayRuns(runs: readonly EvalRun[], contenders: readonly Contender[], options: ReplayOptions): Promise<ReplayResult> {
  const tallies = new Map(options.budgets.map((b) => [b, new Map(contenders.map((c) => [c, new Tally()]))]));
  const infeasibleRuns: InfeasibleRun[] = [];
  let prompts = 0;
  let pairs = 0;
  const pricing = options.pricing ?? kPricing.anthropic;
  // Warm-up: each contender's first calls (module loading, JIT) are not measured.
  const warmRun = runs.find((r) => promptPoints(r.messages).length > 0);
  if (warmRun) {
    const warm = preparePoints(warmRun, 3, Infinity);
    for (const c of contenders) {
      c.startRun?.();
      for (const p of warm) await c.compact(p.input.slice(), options.budgets[0]).catch(() => undefined);
    }
  }
  for (const [n, run] of runs.entries()) {
    const points = preparePoints(run, options.points, Math.min(...options.budgets));
    prompts += points.length;
    pairs += points.filter((p) => p.withPrev).length;
    for (const budget of options.budgets) {
      for (const [k, c] of contenders.entries()) {
        const t = tallies.get(budget)!.get(c)!;
        c.startRun?.();
        let prev: OpenAIChatMessage[] | undefined;
        let refused = 0;
        for (const p of points) {
          if (c.startRun) for (const at of p.skipped) await c.compact(run.messages.slice(0, at), budget).catch(() => undefined);
          let r: CompactOutput;
          const t0 = performance.now();
          try {
            r = await c.compact(p.input.slice(), budget);
          } catch (e) {
            countPoint(t, p, budget);
            t.errors++;
            if (t.errorSamples.length < 3) t.errorSamples.push(`${run.id}: ${(e as Error).message?.split("\n")[0]}`);
            prev = undefined;
            continue;
          }
          t.latencyMs.push(performance.now() - t0);
          measure(t, p, budget, r);
          if (r.infeasible) {
            refused++;
            prev = undefined;
            continue;
          }
          if (p.withPrev && prev) {
            const split = prefixSplit(prev, r.messages, kPrefixCounter);
            const s = prefixShare(split);
            t.cache.push(s);
            if (p.tokens > budget) {
              t.cacheOverBudget.push(s);
              t.cost.pairs++;
              t.cost.sum += cachePricedCost(split, pricing);
              t.cost.uncompacted += p.messageTokens * pricing.write;
            }
          }
          prev = r.messages;
        }
        if (k === 0 && refused > 0) infeasibleRuns.push({ id: run.id, budget, points: refused });
      }
    }
    options.onProgress?.(n + 1, runs.length, prompts);
  }
  const traces: TraceRun[] = [];
  const traced = new Set(options.trace ?? []);
  if (contenders.length > 0) {
    for (const run of runs) if (traced.has(run.id)) for (const budget of options.budgets) traces.push(await traceRun(run, contenders[0], budget));
  }
  const metrics = new Map(options.budgets.map((b) => [b, new Map(contenders.map((c) => [c, summary(tallies.get(b)!.get(c)!)]))]));
  return { metrics, prompts, pairs, traces, infeasibleRuns };
}

/** Every prompt point of `run` through `c` in one session: tokens, epochs and what each removed. */
export async function traceRun(run: EvalRun, c: Contender, budget: number): Promise<TraceRun> {
  c.startRun?.();
  const trace: TraceRun = { runId: run.id, budget, contender: c.name, points: [], epochs: [] };
  const seen = new Set<string>();
  for (const at of promptPoints(run.messages)) {
    const input = run.messages.slice(0, at);
    const tokensIn = promptTokens(input);
    let r: CompactOutput | undefined;
    try {
      r = await c.compact(input, budget);
    } catch {
      r = undefined;
    }
    const tokensOut = r && !r.infeasible ? promptTokens(r.messages) : null;
    const epoch = r?.epoch ?? trace.points.at(-1)?.epoch ?? 0;
    const newEpoch = Boolean(r?.newEpoch);
    if (newEpoch && r) {
      const e: TraceEpoch = {
        epoch,
        atPoint: trace.points.length,
        tokensBefore: tokensIn,
        tokensAfter: tokensOut ?? tokensIn,
        stages: (r.stages ?? []).filter((s) => s.stage > 0).map((s) => ({ name: s.name, candidates: s.candidateCount, compacted: s.compacted, tokensBefore: s.tokensBefore, tokensAfter: s.tokensAfter })),
        refs: (r.refs ?? []).filter((ref) => !seen.has(ref)),
      };
      trace.epochs.push(e);
    }
    for (const ref of r?.refs ?? []) seen.add(ref);
    trace.points.push({ messages: input.length, tokensIn, tokensOut, epoch, newEpoch });
  }
  return trace;
}
