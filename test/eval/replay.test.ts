// The eval's metrics end to end through replayRuns, on a hand-built run with stub contenders
// whose right values are known (0 and 1 cases), then the ctxfold contender on generated runs.
import { describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { checkThresholds, describeMisses, evaluate, loadPeers, parseThresholds, type Contender, type EvalRun } from "../../src/eval/index.js";
import { criticalCore } from "../../src/eval/metrics.js";
import { promptTokens } from "../../src/eval/contenders.js";
import { promptPoints, replayRuns } from "../../src/eval/replay.js";
import { generateRun } from "../../src/gen/run.js";
import { CtxfoldError } from "../../src/errors.js";
import { thrown } from "../helpers.js";

const sys: OpenAIChatMessage = { role: "system", content: "You are a careful coding agent." };
const task: OpenAIChatMessage = { role: "user", content: "Fix the failing test in utils.py and explain the fix." };
const a1: OpenAIChatMessage = { role: "assistant", content: "I will run the tests first.", tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: '{"command":"pytest -q"}' } }] };
const t1: OpenAIChatMessage = { role: "tool", tool_call_id: "call_1", content: "Traceback (most recent call last):\n  File \"utils.py\", line 3, in <module>\nZeroDivisionError: division by zero\n" + "detail line\n".repeat(60) };
const a2: OpenAIChatMessage = { role: "assistant", content: null, tool_calls: [{ id: "call_2", type: "function", function: { name: "bash", arguments: '{"command":"sed -n 1,5p utils.py"}' } }] };
const t2: OpenAIChatMessage = { role: "tool", tool_call_id: "call_2", content: "x = 1\ny = 0\nz = x / y\n" + "more source\n".repeat(60) };
const a3: OpenAIChatMessage = { role: "assistant", content: "The divisor is zero; I changed y to 1." };
const run: EvalRun = { id: "hand-1", messages: [sys, task, a1, t1, a2, t2, a3] };

const stub = (name: string, compact: Contender["compact"], extra: Partial<Contender> = {}): Contender => ({ name, version: "test", note: "stub", compact, ...extra });
const identity = stub("identity", async (messages) => ({ messages }));
/** Always the system prompt and the task: a stable prefix, nothing else. */
const constant = stub("constant", async () => ({ messages: [sys, task] }));
/** Drops tool results but keeps the calls: every point with a call breaks the provider's pairing rule. */
const orphans = stub("orphans", async (messages) => ({ messages: messages.filter((m) => m.role !== "tool") }));
const refuses = stub("refuses", async () => ({ messages: [], infeasible: true }));
const throws = stub("throws", async () => {
  throw new Error("boom");
});
/** Keeps system and task, stores everything else under refs that resolve (or, with `broken`, do not). */
const withRefs = (broken: boolean) =>
  stub(broken ? "refs-broken" : "refs", async (messages) => {
    const removed = messages.slice(2);
    const texts = removed.flatMap((m) => [typeof m.content === "string" ? m.content : "", ...(m.role === "assistant" ? (m.tool_calls ?? []).map((c) => (c as { function: { arguments: string } }).function.arguments) : [])]).filter(Boolean);
    return {
      messages: [sys, task],
      refs: texts.map((_, i) => `ref-${i}`),
      resolve: (ref) => {
        if (broken) throw new Error("gone");
        return texts[Number(ref.slice(4))];
      },
    };
  });

async function metricsOf(c: Contender, budget: number) {
  const r = await replayRuns([run], [c], { budgets: [budget], points: 40 });
  return r.metrics.get(budget)!.get(c)!;
}

const points = promptPoints(run.messages).map((at) => run.messages.slice(0, at));
// At the second point the critical core is the whole prompt (a1 is the latest assistant text and
// brings its call's result); at the third, a2 and t2 are not critical.
const maxCritical = Math.max(...points.map((p) => promptTokens(criticalCore(p))));
const lastWhole = promptTokens(points[2]);

describe("replayRuns on a hand-built run", () => {
  it("has three prompt points (before each assistant message) and a budget where the critical core fits but the whole does not", () => {
    expect(promptPoints(run.messages)).toEqual([2, 4, 6]);
    expect(maxCritical).toBe(promptTokens(points[1]));
    expect(maxCritical).toBeLessThan(lastWhole);
  });

  it("identity under a large budget: every share 1, no compression measured, no refs", async () => {
    const m = await metricsOf(identity, 100_000);
    expect(m).toMatchObject({ prompts: 3, overBudget: 0, criticalFits: 3, withinBudget: 1, infeasible: 0, errors: 0, newViolationPrompts: 0, violationFree: 1, criticalVerbatim: 1, failedResults: 2, failedVisible: 1, recoverable: null, refs: null, compression: null });
    expect(m.cachePrefixPairs).toBe(2);
    expect(m.throughput).toBeGreaterThan(0);
  });

  it("identity over the budget at the last point: within budget 2/3, compression exactly 1; 0 when no point fits", async () => {
    const m = await metricsOf(identity, maxCritical);
    expect(m).toMatchObject({ criticalFits: 3, overBudget: 1, compression: 1 });
    expect(m.withinBudget).toBeCloseTo(2 / 3);
    const none = await metricsOf(stub("over", async (messages) => ({ messages: [...messages, { role: "user", content: "padding ".repeat(400) }] })), maxCritical);
    expect(none.withinBudget).toBe(0);
  });

  it("constant: cache prefix exactly 1, failed results not visible (0), latest assistant text lost", async () => {
    const m = await metricsOf(constant, 100_000);
    expect(m.cachePrefix).toBe(1);
    expect(m.failedVisible).toBe(0);
    expect(m.criticalVerbatimByKind["latest assistant text"]).toBe(0);
    expect(m.criticalVerbatimByKind.system).toBe(1);
    expect(m.criticalVerbatim).toBeCloseTo(1 / 3); // only the first point has no assistant text to keep
  });

  it("orphaned tool calls: a new violation where a call without its result is followed by more (violation-free 2/3)", async () => {
    // At the second point the orphan call ends the prompt (a pending call, not an error); at the third it does not.
    const m = await metricsOf(orphans, 100_000);
    expect(m.newViolationPrompts).toBe(1);
    expect(m.violationFree).toBeCloseTo(2 / 3);
    expect(Object.keys(m.newViolationCodes).length).toBeGreaterThan(0);
  });

  it("refs: recoverable 1 when they resolve, 0 (and every ref unresolved) when they do not", async () => {
    expect(await metricsOf(withRefs(false), 100_000)).toMatchObject({ recoverable: 1, refs: { unresolved: 0 } });
    const broken = await metricsOf(withRefs(true), 100_000);
    expect(broken.recoverable).toBe(0);
    expect(broken.refs!.unresolved).toBe(broken.refs!.total);
  });

  it("a refusal counts as infeasible and not within budget; a throw as an error with a sample", async () => {
    expect(await metricsOf(refuses, 100_000)).toMatchObject({ prompts: 3, infeasible: 3, infeasibleWhereCriticalFits: 3, withinBudget: 0, criticalVerbatim: null });
    const m = await metricsOf(throws, 100_000);
    expect(m).toMatchObject({ prompts: 3, errors: 3, withinBudget: 0 });
    expect(m.errorSamples[0]).toContain("boom");
  });

  it("traces every point of a traced run through the first contender", async () => {
    const r = await replayRuns([run], [identity, constant], { budgets: [100_000], points: 2, trace: ["hand-1"] });
    expect(r.traces).toHaveLength(1);
    expect(r.traces[0]).toMatchObject({ runId: "hand-1", budget: 100_000, contender: "identity" });
    expect(r.traces[0].points.map((p) => p.messages)).toEqual([2, 4, 6]);
    expect(r.traces[0].points.every((p) => p.tokensOut === p.tokensIn)).toBe(true);
  });
});

describe("thresholds", () => {
  it("parse fractions and percentages; unknown metrics and bad items name themselves", () => {
    expect(parseThresholds("within_budget=1, cache_prefix=85%,throughput=20")).toEqual([
      { metric: "within_budget", value: 1 }, { metric: "cache_prefix", value: 0.85 }, { metric: "throughput", value: 20 },
    ]);
    expect(thrown(() => parseThresholds("speed=1"), "E_BAD_INPUT").message).toMatch(/unknown metric "speed" \(one of within_budget/);
    expect(thrown(() => parseThresholds("within_budget"), "E_BAD_INPUT").message).toContain('"within_budget"');
  });

  it("a value below, or not measured (null), misses; at the threshold passes; the message names metric, budget, value and threshold", async () => {
    const m = await metricsOf(constant, 100_000);
    const results = checkThresholds(parseThresholds("cache_prefix=1,failed_visible=0.5,recoverable=0.1"), [{ budget: 100_000, metrics: m }], "constant");
    expect(results.map((r) => r.ok)).toEqual([true, false, false]);
    expect(describeMisses(results)).toEqual([
      "failed_visible at budget 100000: 0% < 50% (constant)",
      "recoverable at budget 100000: n/a (nothing to measure) < 10% (constant)",
    ]);
  });
});

describe("evaluate with the ctxfold contender", () => {
  const runs: EvalRun[] = [1, 2, 3].map((seed) => {
    const g = generateRun({ seed, steps: 30 });
    return { id: `gen-${seed}`, messages: renderMessages(g.messages, "openai-chat") as OpenAIChatMessage[] };
  });

  it("meets the 100% invariants on generated runs at 4k and 8k, traces the longest run with its epochs", async () => {
    const report = await evaluate(runs, [], { input: "generated", budgets: [4000, 8000], points: 12, thresholds: parseThresholds("within_budget=1,violation_free=1,critical_verbatim=1,failed_visible=1,recoverable=1"), trace: 1 });
    expect(report.contenders.map((c) => c.name)).toEqual(["ctxfold"]);
    expect(report.thresholds.filter((t) => !t.ok)).toEqual([]);
    for (const b of report.budgets) expect(b.rows[0].metrics.overBudget).toBeGreaterThan(0);
    expect(report.traces).toHaveLength(2);
    const t = report.traces[0];
    expect(t.epochs.length).toBeGreaterThan(0);
    expect(t.points.filter((p) => p.newEpoch).length).toBe(t.epochs.length);
    expect(t.epochs.some((e) => e.refs.length > 0)).toBe(true);
    expect(t.points.every((p) => p.tokensOut === null || p.tokensOut <= t.budget)).toBe(true);
  });

  it("a second config side by side; a bad config names the field", async () => {
    const report = await evaluate(runs.slice(0, 1), [], { input: "generated", budgets: [8000], points: 6, compare: { config: { targetRatio: 0.4 }, name: "ctxfold (low)" }, trace: 0 });
    expect(report.budgets[0].rows.map((r) => r.contender)).toEqual(["ctxfold", "ctxfold (low)"]);
    await expect(evaluate(runs, [], { input: "x", budgets: [8000], config: { softRatio: 2 } })).rejects.toThrow(/softRatio/);
  });

  it("a peer whose package is missing is a one-line note; an unknown peer name is refused", async () => {
    const missing = { ghost: { name: "Ghost limiter", package: "ctxfold-ghost-peer", load: async () => (await import("ctxfold-ghost-peer" as string)) as Contender } };
    const r = await loadPeers(["ghost"], missing);
    expect(r.contenders).toEqual([]);
    expect(r.notes).toEqual(["Ghost limiter skipped: ctxfold-ghost-peer is not installed (npm install ctxfold-ghost-peer)"]);
    await expect(loadPeers(["nope"])).rejects.toSatisfy((e: unknown) => CtxfoldError.isInstance(e) && /unknown peer "nope"/.test(e.message));
  });
});
