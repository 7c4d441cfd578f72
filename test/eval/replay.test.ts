// The eval's metrics end to end through replayRuns, on a hand-built run with stub contenders
// whose right values are known (0 and 1 cases), then the ctxfold contender on generated runs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { checkThresholds, describeMisses, evaluate, loadPeers, parseThresholds, type Contender, type EvalRun } from "../../src/eval/index.js";
import { criticalCore, kPricing, type Pricing } from "../../src/eval/metrics.js";
import { messageTokens, promptTokens } from "../../src/eval/contenders.js";
import { promptPoints, replayRuns } from "../../src/eval/replay.js";
import { generateRun } from "../../src/gen/run.js";
import { CtxfoldError } from "../../src/errors.js";
import { setPeerResolver } from "../../src/peer-version.js";
import { thrown } from "../helpers.js";
import { resolverIn, writeFakePackages } from "../helpers-peers.js";

const sys: OpenAIChatMessage = { role: "system", content: "You are a careful coding agent." };
const task: OpenAIChatMessage = { role: "user", content: "Fix the failing test in utils.py and explain the fix." };
const a1: OpenAIChatMessage = {
  role: "assistant",
  content: "I will run the tests first.",
  tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: '{"command":"pytest -q"}' } }],
};
const t1: OpenAIChatMessage = {
  role: "tool",
  tool_call_id: "call_1",
  content: 'Traceback (most recent call last):\n  File "utils.py", line 3, in <module>\nZeroDivisionError: division by zero\n' + "detail line\n".repeat(60),
};
const a2: OpenAIChatMessage = {
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call_2", type: "function", function: { name: "bash", arguments: '{"command":"sed -n 1,5p utils.py"}' } }],
};
const t2: OpenAIChatMessage = { role: "tool", tool_call_id: "call_2", content: "x = 1\ny = 0\nz = x / y\n" + "more source\n".repeat(60) };
const a3: OpenAIChatMessage = { role: "assistant", content: "The divisor is zero; I changed y to 1." };
const run: EvalRun = { id: "hand-1", messages: [sys, task, a1, t1, a2, t2, a3] };

const stub = (name: string, compact: Contender["compact"], extra: Partial<Contender> = {}): Contender => ({
  name,
  version: "test",
  note: "stub",
  compact,
  ...extra,
});
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
    const texts = removed
      .flatMap((m) => [
        typeof m.content === "string" ? m.content : "",
        ...(m.role === "assistant" ? (m.tool_calls ?? []).map((c) => (c as { function: { arguments: string } }).function.arguments) : []),
      ])
      .filter(Boolean);
    return {
      messages: [sys, task],
      refs: texts.map((_, i) => `ref-${i}`),
      resolve: (ref) => {
        if (broken) throw new Error("gone");
        return texts[Number(ref.slice(4))];
      },
    };
  });

async function metricsOf(c: Contender, budget: number, pricing?: Pricing, runs: EvalRun[] = [run]) {
  const r = await replayRuns(runs, [c], { budgets: [budget], points: 40, ...(pricing ? { pricing } : {}) });
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
    expect(m).toMatchObject({
      prompts: 3,
      overBudget: 0,
      criticalFits: 3,
      withinBudget: 1,
      infeasible: 0,
      errors: 0,
      newViolationPrompts: 0,
      violationFree: 1,
      criticalVerbatim: 1,
      failedResults: 2,
      failedVisible: 1,
      recoverable: null,
      refs: null,
      compression: null,
    });
    expect(m.cachePrefixPairs).toBe(2);
    expect(m.throughput).toBeGreaterThan(0);
  });

  it("identity over the budget at the last point: within budget 2/3, compression exactly 1; 0 when no point fits", async () => {
    const m = await metricsOf(identity, maxCritical);
    expect(m).toMatchObject({ criticalFits: 3, overBudget: 1, compression: 1 });
    expect(m.withinBudget).toBeCloseTo(2 / 3);
    const none = await metricsOf(
      stub("over", async (messages) => ({ messages: [...messages, { role: "user", content: "padding ".repeat(400) }] })),
      maxCritical,
    );
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
    expect(await metricsOf(refuses, 100_000)).toMatchObject({
      prompts: 3,
      infeasible: 3,
      infeasibleWhereCriticalFits: 3,
      withinBudget: 0,
      criticalVerbatim: null,
    });
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

describe("cost per call and budget fill", () => {
  // Tokens of the prompts at the three points, counted message by message (the reply primer is
  // not part of what is cached or written).
  const sum = (ms: OpenAIChatMessage[]) => ms.reduce((n, m) => n + messageTokens(m), 0);
  const [S1, S2, S3] = points.map(sum);
  const custom: Pricing = { name: "custom", read: 0.5, write: 2 };

  it("identity over the budget: each call caches the previous prompt and writes what is new", async () => {
    for (const p of [kPricing.anthropic, kPricing.openai, custom]) {
      const m = await metricsOf(identity, 1, p);
      const cost = S1 * p.read + (S2 - S1) * p.write + (S2 * p.read + (S3 - S2) * p.write);
      expect(m.costPairs).toBe(2);
      expect(m.costPerCall).toBeCloseTo(cost / 2, 9);
      expect(m.costSavings).toBeCloseTo(1 - cost / ((S2 + S3) * p.write), 9);
    }
    // The default pricing is Anthropic's.
    expect((await metricsOf(identity, 1)).costPerCall).toBeCloseTo((S1 * 0.1 + (S2 - S1) * 1.25 + S2 * 0.1 + (S3 - S2) * 1.25) / 2, 9);
  });

  it("a constant output is all cache reads; no pair above the budget gives null", async () => {
    const T = sum([sys, task]);
    expect((await metricsOf(constant, 1, kPricing.anthropic)).costPerCall).toBeCloseTo(T * 0.1, 9);
    expect((await metricsOf(constant, 1, custom)).costPerCall).toBeCloseTo(T * 0.5, 9);
    expect((await metricsOf(constant, 1, custom)).costSavings).toBeCloseTo(1 - (2 * T * 0.5) / ((S2 + S3) * 2), 9);
    // Only the last point is above this budget: one pair.
    const m = await metricsOf(constant, maxCritical);
    expect(m.costPairs).toBe(1);
    expect(m.costPerCall).toBeCloseTo(T * 0.1, 9);
    expect(await metricsOf(constant, 100_000)).toMatchObject({ costPerCall: null, costSavings: null, costPairs: 0 });
  });

  it("a call after one that threw or refused has no pair", async () => {
    const flaky = stub("flaky", async (messages) => {
      if (messages.length === 4) throw new Error("flake");
      return { messages };
    });
    expect((await metricsOf(flaky, 1)).costPairs).toBe(0); // point 2 threw; point 3's predecessor is gone
    expect(await metricsOf(refuses, 1)).toMatchObject({ costPairs: 0, costPerCall: null, budgetFill: { p50: null, p95: null } });
  });

  it("budget fill: output tokens / budget over the points above it, median and 95th percentile (nearest rank)", async () => {
    const messages: OpenAIChatMessage[] = [sys, task];
    for (let k = 1; k <= 20; k++) {
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [{ id: `c${k}`, type: "function", function: { name: "bash", arguments: `{"command":"step ${k}"}` } }],
      });
      messages.push({ role: "tool", tool_call_id: `c${k}`, content: "output line\n".repeat(10 * k) });
    }
    messages.push({ role: "assistant", content: "done" });
    const long: EvalRun = { id: "long", messages };
    const tokens = promptPoints(messages).map((at) => promptTokens(messages.slice(0, at)));
    const budget = tokens[5];
    const over = tokens.filter((t) => t > budget).sort((a, b) => a - b);
    expect(over).toHaveLength(15);
    const m = await metricsOf(identity, budget, undefined, [long]);
    expect(m.budgetFill.p50).toBe(over[7] / budget);
    expect(m.budgetFill.p95).toBe(over[14] / budget);
    expect(m.budgetFill.p50).toBeGreaterThan(1); // identity does not compact
    const c = await metricsOf(constant, budget, undefined, [long]);
    expect(c.budgetFill).toEqual({ p50: promptTokens([sys, task]) / budget, p95: promptTokens([sys, task]) / budget });
  });
});

describe("thresholds", () => {
  it("parse fractions and percentages; unknown metrics and bad items name themselves", () => {
    expect(parseThresholds("within_budget=1, cache_prefix=85%,throughput=20")).toEqual([
      { metric: "within_budget", value: 1 },
      { metric: "cache_prefix", value: 0.85 },
      { metric: "throughput", value: 20 },
    ]);
    expect(thrown(() => parseThresholds("speed=1"), "E_BAD_INPUT").message).toMatch(/unknown metric "speed" \(one of within_budget/);
    expect(thrown(() => parseThresholds("within_budget"), "E_BAD_INPUT").message).toContain('"within_budget"');
  });

  it("name the evidence, cost and fill metrics", async () => {
    expect(parseThresholds("evidence_recall=0.9,cost_savings=50%,budget_fill=0.5")).toEqual([
      { metric: "evidence_recall", value: 0.9 },
      { metric: "cost_savings", value: 0.5 },
      { metric: "budget_fill", value: 0.5 },
    ]);
    const m = await metricsOf(identity, 1);
    const results = checkThresholds(parseThresholds("evidence_recall=1,cost_savings=0.99,budget_fill=1"), [{ budget: 1, metrics: m }], "identity");
    expect(results.map((r) => [r.metric, r.value, r.ok])).toEqual([
      ["evidence_recall", m.evidenceRecall, m.evidenceRecall !== null],
      ["cost_savings", m.costSavings, false],
      ["budget_fill", m.budgetFill.p50, true],
    ]);
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
    const report = await evaluate(runs, [], {
      input: "generated",
      budgets: [4000, 8000],
      points: 12,
      thresholds: parseThresholds("within_budget=1,violation_free=1,critical_verbatim=1,failed_visible=1,recoverable=1"),
      trace: 1,
    });
    expect(report.contenders.map((c) => c.name)).toEqual(["ctxfold", "tail baseline"]);
    expect(report.thresholds.filter((t) => !t.ok)).toEqual([]);
    for (const b of report.budgets) expect(b.rows[0].metrics.overBudget).toBeGreaterThan(0);
    expect(report.traces).toHaveLength(2);
    const t = report.traces[0];
    expect(t.epochs.length).toBeGreaterThan(0);
    expect(t.points.filter((p) => p.newEpoch).length).toBe(t.epochs.length);
    expect(t.epochs.some((e) => e.refs.length > 0)).toBe(true);
    expect(t.points.every((p) => p.tokensOut === null || p.tokensOut <= t.budget)).toBe(true);
    // Each epoch has the compactor's own tokens, and every stage's number and skips, which its table reads.
    for (const e of t.epochs) {
      expect(e.compactor).toEqual({ tokensBefore: expect.any(Number), tokensAfter: expect.any(Number) });
      expect(e.stages.length).toBeGreaterThan(0);
      for (const s of e.stages) expect(s).toMatchObject({ stage: expect.any(Number), skipped: expect.any(Object) });
    }
  });

  it("a second config side by side; a bad config names the field", async () => {
    const report = await evaluate(runs.slice(0, 1), [], {
      input: "generated",
      budgets: [8000],
      points: 6,
      compare: { config: { targetRatio: 0.4 }, name: "ctxfold (low)" },
      trace: 0,
    });
    expect(report.budgets[0].rows.map((r) => r.contender)).toEqual(["ctxfold", "ctxfold (low)", "tail baseline"]);
    await expect(evaluate(runs, [], { input: "x", budgets: [8000], config: { softRatio: 2 } })).rejects.toThrow(/softRatio/);
  });

  it("a peer whose package is missing is a one-line note; an unknown peer name is refused", async () => {
    const missing = {
      ghost: { name: "Ghost limiter", package: "ctxfold-ghost-peer", load: async () => (await import("ctxfold-ghost-peer" as string)) as Contender },
    };
    const r = await loadPeers(["ghost"], missing);
    expect(r.contenders).toEqual([]);
    expect(r.notes).toEqual(["Ghost limiter skipped: ctxfold-ghost-peer is not installed (npm install ctxfold-ghost-peer)"]);
    await expect(loadPeers(["nope"])).rejects.toSatisfy((e: unknown) => CtxfoldError.isInstance(e) && /unknown peer "nope"/.test(e.message));
  });

  it("a peer installed at a version outside ctxfold's range is a one-line note naming the range, and is never loaded", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-old-peer-"));
    try {
      setPeerResolver(resolverIn(writeFakePackages(dir, { ai: "5.0.52" })));
      let loaded = false;
      const old = { "ai-sdk": { name: "AI SDK pruneMessages recipe", package: "ai", load: async () => ((loaded = true), {}) as Contender } };
      const r = await loadPeers(["ai-sdk"], old);
      expect(r.contenders).toEqual([]);
      expect(loaded).toBe(false);
      expect(r.notes).toEqual(['AI SDK pruneMessages recipe skipped: eval --against ai-sdk needs ai >=6.0.0; 5.0.52 is installed: npm install ai@">=6.0.0"']);
    } finally {
      setPeerResolver(undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
