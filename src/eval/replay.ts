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
import { validate } from "../validate/index.js";
import { messageTokens, promptTokens } from "./tokens.js";
import type { CompactOutput, Contender } from "./protocol.js";
import { nextStepEvidence } from "./evidence.js";
import { kPricing, type Pricing, contentText, criticalCore, failedToolResults, samplePoints, visibleHead } from "./metrics.js";
import { addTally, countError, countPair, measure, summary, Tally, type Point } from "./tally.js";
import { MissTally, recordMisses, type MissReport } from "./misses.js";
import { sourceOf } from "./sources.js";
import type { MetricGrid, TraceEpoch, TraceRun } from "./types.js";

export interface EvalRun {
  id: string;
  messages: OpenAIChatMessage[];
  /** The run's source group (sources.ts). @default sourceOf(id) */
  source?: string;
}

export interface ReplayOptions {
  budgets: number[];
  /** At most this many prompt points per run (as consecutive pairs). */
  points: number;
  /** Prices of cached and uncached input tokens for the cost metric. @default kPricing.anthropic */
  pricing?: Pricing;
  /** Runs (by id) to replay at every point through the first contender, for the report's plots. @default none */
  trace?: readonly string[];
  /** Diagnose the first contender's missed evidence terms (misses.ts). @default false */
  misses?: boolean;
  /** After each run: runs done, of how many. @default none */
  onProgress?: (done: number, total: number, prompts: number) => void;
}

/** A run the first contender refused at some budget (budget_infeasible), for the report's list. */
export interface InfeasibleRun {
  id: string;
  budget: number;
  points: number;
}

/** Per budget, per contender (in the order given), the metrics. */
export type { MetricGrid } from "./types.js";

export interface ReplayResult {
  metrics: MetricGrid;
  /** The same per source group (sources.ts), in the order the groups first appear, with their run counts. */
  sources: { source: string; runs: number; metrics: MetricGrid }[];
  prompts: number;
  pairs: number;
  traces: TraceRun[];
  infeasibleRuns: InfeasibleRun[];
  /** Per budget, the first contender's missed evidence diagnosed (only with options.misses). */
  misses?: MissReport[];
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

/** The run's sampled prompt points (samplePoints), each with what every contender's measurement shares; evidence only where the prompt is over `minBudget`. */
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
      failed: failedToolResults(input).map((message) => ({ message, head: visibleHead(contentText(message)) })),
    };
  });
}

type TallyGrid = Map<number, Map<Contender, Tally>>;

const tallyGrid = (budgets: readonly number[], contenders: readonly Contender[]): TallyGrid =>
  new Map(budgets.map((b) => [b, new Map(contenders.map((c) => [c, new Tally()]))]));
const summaryGrid = (grid: TallyGrid): MetricGrid => new Map([...grid].map(([b, row]) => [b, new Map([...row].map(([c, t]) => [c, summary(t)]))]));

/** Replays `runs` through `contenders` at every budget (see the module comment); each run's tally adds to the pooled one and to its source's. */
export async function replayRuns(runs: readonly EvalRun[], contenders: readonly Contender[], options: ReplayOptions): Promise<ReplayResult> {
  const tallies = tallyGrid(options.budgets, contenders);
  const sources = new Map<string, { runs: number; tallies: TallyGrid }>();
  const infeasibleRuns: InfeasibleRun[] = [];
  const misses = options.misses ? new Map(options.budgets.map((b) => [b, new MissTally()])) : undefined;
  let prompts = 0;
  let pairs = 0;
  const pricing = options.pricing ?? kPricing.anthropic;
  await warmUp(runs, contenders, options.budgets[0]);
  for (const [n, run] of runs.entries()) {
    const source = run.source ?? sourceOf(run.id);
    const group = sources.get(source) ?? { runs: 0, tallies: tallyGrid(options.budgets, contenders) };
    sources.set(source, group);
    group.runs++;
    const points = preparePoints(run, options.points, Math.min(...options.budgets));
    prompts += points.length;
    pairs += points.filter((p) => p.withPrev).length;
    for (const budget of options.budgets) {
      for (const [k, c] of contenders.entries()) {
        const diagnose = k === 0 ? misses?.get(budget) : undefined;
        const t = new Tally();
        const refused = await replayPoints(run, points, c, budget, t, pricing, diagnose);
        addTally(tallies.get(budget)!.get(c)!, t);
        addTally(group.tallies.get(budget)!.get(c)!, t);
        if (k === 0 && refused > 0) infeasibleRuns.push({ id: run.id, budget, points: refused });
      }
    }
    options.onProgress?.(n + 1, runs.length, prompts);
  }
  const traces = contenders.length > 0 ? await traceRuns(runs, contenders[0], options) : [];
  const bySource = [...sources].map(([source, g]) => ({ source, runs: g.runs, metrics: summaryGrid(g.tallies) }));
  const missReports = misses && contenders.length > 0 ? [...misses].map(([b, m]) => m.report(b, contenders[0].name)) : undefined;
  return { metrics: summaryGrid(tallies), sources: bySource, prompts, pairs, traces, infeasibleRuns, ...(missReports ? { misses: missReports } : {}) };
}

/** Each contender's first calls (module loading, JIT), on a few points of the first run that has any: not measured. */
async function warmUp(runs: readonly EvalRun[], contenders: readonly Contender[], budget: number): Promise<void> {
  const warmRun = runs.find((r) => promptPoints(r.messages).length > 0);
  if (!warmRun) return;
  const warm = preparePoints(warmRun, 3, Infinity);
  for (const c of contenders) {
    c.startRun?.();
    for (const p of warm) await c.compact(p.input.slice(), budget).catch(() => undefined);
  }
}

/**
 * Replays a run's sampled points through one contender at one budget, in one session, into its
 * tally: each call timed and measured, and with the call before it (when both were answered) a
 * pair for the cache and cost metrics. A stateful contender is also called, unmeasured, at the
 * points the sample skipped. With `misses`, each answer over the budget has its missed evidence
 * diagnosed. Returns how many points it refused (budget_infeasible).
 */
async function replayPoints(
  run: EvalRun,
  points: readonly Point[],
  c: Contender,
  budget: number,
  t: Tally,
  pricing: Pricing,
  misses?: MissTally,
): Promise<number> {
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
      countError(t, p, budget, run.id, e);
      prev = undefined;
      continue;
    }
    t.latencyMs.push(performance.now() - t0);
    measure(t, p, budget, r);
    if (misses && !r.infeasible && p.tokens > budget && p.evidence.length > 0) recordMisses(misses, run.id, p.input, p.evidence, r);
    if (r.infeasible) {
      refused++;
      prev = undefined;
      continue;
    }
    if (p.withPrev && prev) countPair(t, p, budget, prev, r.messages, pricing);
    prev = r.messages;
  }
  return refused;
}

/** The traced runs (options.trace, in input order) through the first contender at every budget. */
async function traceRuns(runs: readonly EvalRun[], first: Contender, options: ReplayOptions): Promise<TraceRun[]> {
  const traces: TraceRun[] = [];
  const traced = new Set(options.trace ?? []);
  for (const run of runs) if (traced.has(run.id)) for (const budget of options.budgets) traces.push(await traceRun(run, first, budget));
  return traces;
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
        ...(r.compactorTokens ? { compactor: r.compactorTokens } : {}),
        // Every stage, stage 0 too: the table's rows chain from the compactor's tokens before to its after.
        stages: (r.stages ?? []).map((s) => ({
          stage: s.stage,
          name: s.name,
          candidates: s.candidateCount,
          compacted: s.compacted,
          skipped: s.skipped,
          tokensBefore: s.tokensBefore,
          tokensAfter: s.tokensAfter,
        })),
        refs: (r.refs ?? []).filter((ref) => !seen.has(ref)),
      };
      trace.epochs.push(e);
    }
    for (const ref of r?.refs ?? []) seen.add(ref);
    trace.points.push({ messages: input.length, tokensIn, tokensOut, epoch, newEpoch });
  }
  return trace;
}
