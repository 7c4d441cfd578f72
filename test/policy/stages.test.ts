/**
 * The tiered pipeline's stages as one contract (policy/stages/stage.ts): the registry lists them
 * in stage order with unique names, and the runner gives each its turn and its report by the
 * contract alone (the work's target, `when`, `skip`, `essential` near the deadline, the plan
 * made once after stage 0), as the pipeline did before its stages were a registry.
 */
import { describe, expect, it } from "vitest";
import { parseMessages } from "../../src/adapters/index.js";
import { generateRun } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import type { PolicyEvent } from "../../src/policy/events.js";
import { createCompactor, kDefaultTieredSettings } from "../../src/policy/index.js";
import { runStages, type CallClock } from "../../src/policy/pipeline.js";
import { kStages, type RegisteredStage } from "../../src/policy/stages/index.js";
import { mergeOldestStage } from "../../src/policy/stages/merge.js";
import type { Plan, StageContext } from "../../src/policy/stages/stage.js";
import { supersededHistoryStage } from "../../src/policy/stages/superseded.js";
import { toolArgsStage } from "../../src/policy/stages/tool-args.js";
import { toolOutputsStage } from "../../src/policy/stages/tool-outputs.js";
import { historicalTextStage } from "../../src/policy/stages/history.js";
import { StepCache } from "../../src/policy/step-cache.js";
import { openWork, StageKit, type Work } from "../../src/policy/work.js";
import { StepReducer } from "../../src/steps/reducer.js";
import { createMemoryStore } from "../../src/store/index.js";
import { tokenMeasure } from "../../src/tokens/measure.js";
import { TokenCounter } from "../../src/tokens/token-counter.js";
import { responsesAgentInput } from "../helpers-server-context.js";

const counter = new TokenCounter({ encoding: "o200k_base" });

function kit(events: PolicyEvent[] = []): StageKit {
  const store = createMemoryStore();
  return new StageKit(
    {
      settings: kDefaultTieredSettings,
      store,
      counter,
      steps: new StepCache(),
      summarizer: undefined,
      emit: (e) => events.push(e),
      memo: new Map(),
      stepCompactors: new Map(),
      storeReducer: new StepReducer({ store }),
    },
    tokenMeasure(counter),
  );
}

const user = (id: string, text: string): Message => ({ id, role: "user", parts: [{ type: "text", text }], meta: {} });

/** Twenty long user messages as a work whose budget is their total: far above its target (targetRatio × budget), which one of them is under. */
function work(k: StageKit): Work {
  const msgs = Array.from({ length: 20 }, (_, i) => user(`u${i}`, `message ${i}: ${"some words of it ".repeat(100)}`));
  const total = k.measure.all(msgs);
  return openWork(k, msgs, total, total);
}

/** A clock that ticks once a reading, with `remaining` ms to the deadline; `reads` counts the readings of what remains. */
function clock(remaining = Number.POSITIVE_INFINITY): CallClock & { reads: number } {
  let t = 0;
  const c = { reads: 0, now: () => t++, remaining: () => (c.reads++, remaining) };
  return c;
}

const context = (k: StageKit): StageContext => ({ settings: k.settings, tier: "pressure", preserve: 2 });

/** A turn a stand-in stage had: its name and the plan it saw. */
interface Turn {
  name: string;
  plan: Plan | undefined;
}

/** A registered stage's number and name with stand-in behaviour: it records its turn, then does `then` (nothing by default). */
function standIn(def: RegisteredStage, turns: Turn[], over: Partial<RegisteredStage> = {}, then: (k: StageKit, w: Work) => void = () => {}): RegisteredStage {
  return {
    ...def,
    when: undefined,
    skip: undefined,
    run: (k: StageKit, w: Work, ctx: StageContext) => {
      turns.push({ name: def.name, plan: ctx.plan });
      then(k, w);
    },
    ...over,
  } as RegisteredStage;
}

/** A stand-in's behaviour that brings the work to its target: only its first message stays. */
const reachTarget = (k: StageKit, w: Work) => k.relist(w, w.msgs.slice(0, 1), false);

describe("the stages' registry", () => {
  it("lists its stages in stage order, stage 0 first, with unique names", () => {
    const numbers = kStages.map((s) => s.stage);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(numbers[0]).toBe(0);
    expect(new Set(kStages.map((s) => s.name)).size).toBe(kStages.length);
    for (const s of kStages) expect(typeof s.run).toBe("function");
  });
});

describe("the runner, by the contract alone", () => {
  it("a stage whose `when` is false has no turn and no report; the others report in the registry's order, each emitted", async () => {
    const events: PolicyEvent[] = [];
    const k = kit(events);
    const w = work(k);
    const turns: Turn[] = [];
    const stages = [
      standIn(supersededHistoryStage, turns, { when: () => false }),
      standIn(toolArgsStage, turns),
      standIn(toolOutputsStage, turns, { when: () => false }),
      standIn(historicalTextStage, turns, { when: () => true }),
    ];
    const reports = await runStages(k, w, context(k), clock(), stages);
    expect(turns.map((t) => t.name)).toEqual(["tool_args", "historical_text"]);
    expect(reports.map((r) => [r.stage, r.name])).toEqual([
      [1, "tool_args"],
      [3, "historical_text"],
    ]);
    expect(events).toEqual(reports.map((r) => ({ type: "compaction_stage", tier: "pressure", ...r })));
  });

  it("near the deadline a stage that is not essential is skipped as deadline, a `skip` is the turn's one skip reason, and neither runs", async () => {
    const k = kit();
    const w = work(k);
    const turns: Turn[] = [];
    const stages = [
      standIn(toolArgsStage, turns, { skip: () => "no_gain" }),
      standIn(toolOutputsStage, turns, { essential: true }),
      standIn(historicalTextStage, turns, { essential: false }),
    ];
    const reports = await runStages(k, w, context(k), clock(0), stages);
    expect(turns.map((t) => t.name)).toEqual(["tool_outputs"]);
    expect(reports.map((r) => r.skipped)).toEqual([{ no_gain: 1 }, {}, { deadline: 1 }]);
    for (const r of reports) expect(r.tokensAfter).toBe(r.tokensBefore);
  });

  it("once the work is at its target, no later stage has a turn", async () => {
    const k = kit();
    const w = work(k);
    const before = w.total;
    const turns: Turn[] = [];
    const stages = [standIn(toolArgsStage, turns, {}, reachTarget), standIn(toolOutputsStage, turns), standIn(mergeOldestStage, turns)];
    const reports = await runStages(k, w, context(k), clock(), stages);
    expect(turns.map((t) => t.name)).toEqual(["tool_args"]);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ tokensBefore: before, tokensAfter: w.total });
    expect(w.total).toBeLessThanOrEqual(w.target);
  });

  it("the plan is made once, after stage 0 and before any other stage, even when none has a turn", async () => {
    const k = kit();
    const w = work(k);
    const turns: Turn[] = [];
    await runStages(k, w, context(k), clock(), [standIn(supersededHistoryStage, turns), standIn(toolArgsStage, turns), standIn(toolOutputsStage, turns)]);
    expect(turns.map((t) => t.name)).toEqual(["superseded_history", "tool_args", "tool_outputs"]);
    expect(turns[0].plan).toBeUndefined();
    expect(turns[1].plan).toBeDefined();
    expect(turns[2].plan).toBe(turns[1].plan);

    const reached = work(k);
    const c = clock();
    await runStages(k, reached, context(k), c, [standIn(supersededHistoryStage, [], {}, reachTarget), standIn(toolArgsStage, [])]);
    // Stage 0 is essential (no reading of the deadline for it): the one reading is the plan's.
    expect(c.reads).toBe(1);
  });
});

describe("the registry's stages in a compaction", () => {
  const run = generateRun({ seed: 7, steps: 12 }).messages;
  const tokens = createCompactor().measure(run);

  it("without a provider's compaction stage 0 has no turn; stage 4 has one only while the work is above the hard threshold", async () => {
    // Stage 3 leaves it above the target but within the hard threshold: stage 4's `when` is false.
    const within = await createCompactor().compactCanonical(run, { budget: Math.floor(tokens / 2) });
    expect(within.tier).toBe("critical");
    expect(within.stages.map((s) => s.name)).toEqual(["tool_args", "tool_outputs", "historical_text"]);
    expect(within.tokensAfter).toBeGreaterThan(Math.floor(kDefaultTieredSettings.targetRatio * Math.floor(tokens / 2)));
    const above = await createCompactor().compactCanonical(run, { budget: Math.floor(tokens / 4) });
    expect(above.stages.map((s) => s.name)).toEqual(["tool_args", "tool_outputs", "historical_text", "merge_oldest"]);
  });

  it("stages 1 and 2 report no_gain, unchanged, where the plan found stage 3 would replace their work", async () => {
    const r = await createCompactor().compactCanonical(run, { budget: Math.floor(tokens / 2) });
    for (const s of r.stages.slice(0, 2)) expect(s).toMatchObject({ candidateCount: 0, compacted: 0, skipped: { no_gain: 1 }, tokensAfter: s.tokensBefore });
  });

  it("stage 4's last resort keeps what fits of the latest output where the critical text leaves a band under the soft threshold no wider than the margin above it, and aims at the target where it leaves more", async () => {
    const file = Array.from({ length: 400 }, (_, i) => `${i + 1}: value_${i} = compute(item_${i}, limit=${i * 7})`).join("\n");
    const session = (system: string): Message[] => [
      { id: "s", role: "system", parts: [{ type: "text", text: system }], meta: {} },
      user("u", "Fix the limit handling in calc.py."),
      { id: "a", role: "assistant", parts: [{ type: "tool-call", id: "c1", name: "open", args: JSON.stringify({ path: "calc.py" }) }], meta: {} },
      { id: "t", role: "tool", parts: [{ type: "tool-result", callId: "c1", name: "open", content: [{ type: "text", text: file }] }], meta: {} },
    ];
    const budget = 4000;
    const heavy = session(Array.from({ length: 430 }, (_, i) => `Rule ${i}: follow the interface.`).join(" "));
    const light = session("You are a careful programmer.");
    const c = createCompactor();
    const systemTokens = c.measure(heavy.slice(0, 1));
    expect(systemTokens).toBeGreaterThan((2 * kDefaultTieredSettings.softRatio - 1) * budget);
    expect(systemTokens).toBeLessThan(budget - 200);
    const kept = await c.compactCanonical(heavy, { budget });
    expect(kept.stages.map((s) => s.name)).toContain("merge_oldest");
    expect(kept.tokensAfter).toBeLessThanOrEqual(budget);
    // The critical text leaves no band wider than the margin: the output keeps the room up to the budget, not its floor.
    const output = (r: { messages: Message[] }) => c.measure(r.messages.filter((m) => m.role === "tool"));
    expect(output(kept)).toBeGreaterThan(150);
    expect(kept.tokensAfter).toBeGreaterThan(budget - 200);
    const cut = await c.compactCanonical(light, { budget });
    expect(cut.stages.map((s) => s.name)).toContain("merge_oldest");
    // A band can: the output is summarised toward the target, leaving room for the next appends.
    expect(cut.tokensAfter).toBeLessThan(kDefaultTieredSettings.softRatio * budget);
  });

  it("with a provider's compaction in the input, stage 0 has the first turn", async () => {
    const messages = parseMessages(responsesAgentInput(30, 12), { format: "openai-responses" }).messages;
    const budget = Math.floor(createCompactor().measure(messages, "openai-responses") * 0.2);
    const r = await createCompactor().compactCanonical(messages, { budget, format: "openai-responses" });
    expect(r.stages[0]).toMatchObject({ stage: 0, name: "superseded_history" });
    expect(r.stages.map((s) => s.stage)).toEqual([...r.stages.map((s) => s.stage)].sort((a, b) => a - b));
  });
});
