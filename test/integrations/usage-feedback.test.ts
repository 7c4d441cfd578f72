/**
 * Usage feedback through the AI SDK (the must-show): a 200-step generateText agent loop
 * whose stub model reports usage as a tokenizer with 1.3× o200k_base's counts would, against a
 * window W. Without feedback the budget is the window in o200k tokens and the provider's count
 * overflows it; with it, every call after the first is within W by the reported count.
 */
import { generateText, simulateReadableStream, stepCountIs, streamText, tool, wrapLanguageModel, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseMessages } from "../../src/adapters/index.js";
import {
  ctxfoldMiddleware,
  ctxfoldPrepareStep,
  type AiSdkCallParams,
  type AiSdkPrepareStepOptions,
  type CompactInfo,
  type CtxfoldIntegrationOptions,
  type UsageEvent,
} from "../../src/integrations/ai-sdk.js";
import { tokenMeasure } from "../../src/tokens/measure.js";
import { TokenCounter } from "../../src/tokens/token-counter.js";
import { hasCorpus } from "../helpers.js";
import { corpusLines } from "../helpers-corpus.js";

// The SDK prints its warnings by default; the suite fails on console output.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const kWindow = 24_000;
const kReserve = 1024;
/** What the stub's tokenizer counts per o200k_base token. */
const kInflation = 1.3;
const measure = tokenMeasure(new TokenCounter());

/** The project's exact measure of a provider prompt (o200k_base with OpenAI's overheads). */
const exactOf = (prompt: unknown) => measure.exact(parseMessages(prompt, { format: "ai-sdk" }).messages);

/** Real tool outputs: the first 200 tool results of the corpus between 300 and 8000 characters. */
function corpusToolOutputs(): string[] {
  const out: string[] = [];
  for (const line of corpusLines()) {
    for (const m of (JSON.parse(line) as { messages: { role: string; content?: unknown }[] }).messages) {
      if (m.role === "tool" && typeof m.content === "string" && m.content.length >= 300 && m.content.length <= 8000) out.push(m.content);
      if (out.length === 200) return out;
    }
  }
  return out;
}

type Usage = (prompt: unknown) => { total: number | undefined };

/** A stub model that calls the `run` tool at every step and reports `usage(prompt)` as its input tokens. */
function stubModel(usage: Usage) {
  const reported: number[] = [];
  const model = new MockLanguageModelV3({
    modelId: "stub-model",
    doGenerate: async ({ prompt }) => {
      const k = reported.length;
      const { total } = usage(prompt);
      reported.push(total ?? Number.NaN);
      return {
        content: [{ type: "tool-call", toolCallId: `call_${k}`, toolName: "run", input: JSON.stringify({ step: k }) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: { inputTokens: { total, noCache: total, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 12, text: 12, reasoning: 0 } },
        warnings: [],
      };
    },
  });
  return { model, reported };
}

const inflated: Usage = (prompt) => ({ total: Math.ceil(kInflation * exactOf(prompt)) });

/** The agent loop: generateText with a tool whose outputs are the corpus's, until `steps` steps. */
async function agentLoop(
  outputs: string[],
  model: MockLanguageModelV3,
  wrap: { middleware?: CtxfoldIntegrationOptions<AiSdkCallParams>; prepareStep?: CtxfoldIntegrationOptions<AiSdkPrepareStepOptions> },
  steps = 200,
) {
  const run = tool({
    description: "Runs the next step of the investigation",
    inputSchema: z.object({ step: z.number() }),
    execute: async ({ step }) => outputs[step % outputs.length],
  });
  return generateText({
    model: wrap.middleware ? wrapLanguageModel({ model, middleware: ctxfoldMiddleware(wrap.middleware) }) : model,
    system: "You are a careful coding agent. Use the run tool until the failing test passes.",
    prompt: "The test suite fails on the parser module; find out why and fix it.",
    tools: { run },
    stopWhen: stepCountIs(steps),
    ...(wrap.prepareStep ? { prepareStep: ctxfoldPrepareStep(wrap.prepareStep) } : {}),
  });
}

/** An OpenAI-like profile (factor 1, no margin) for the stub's id, with window W. */
const kProfile = { modelProfile: { contextWindow: kWindow, factor: 1, margin: 0 }, reserveTokens: kReserve };

describe.skipIf(!hasCorpus)("usage feedback in a 200-step AI SDK agent loop (1.3× o200k reported, real tool outputs)", () => {
  it(`without feedback the provider's count overflows the window; with it every call after the first is within it`, async () => {
    const outputs = corpusToolOutputs();
    expect(outputs).toHaveLength(200);

    const without = stubModel(inflated);
    const r0 = await agentLoop(outputs, without.model, { middleware: { ...kProfile, usageFeedback: false } });
    expect(r0.steps).toHaveLength(200);
    const overflowing = without.reported.filter((n) => n > kWindow).length;
    expect(overflowing, "without feedback some prompt must overflow W by the reported count").toBeGreaterThan(0);

    const withFeedback = stubModel(inflated);
    const events: UsageEvent[] = [];
    const infos: CompactInfo[] = [];
    const r1 = await agentLoop(outputs, withFeedback.model, { middleware: { ...kProfile, onUsage: (e) => events.push(e), onCompact: (i) => infos.push(i) } });
    expect(r1.steps).toHaveLength(200);
    const after = withFeedback.reported.slice(1);
    expect(Math.max(...after), `max reported ${Math.max(...after)} > W ${kWindow}`).toBeLessThanOrEqual(kWindow);
    // Compaction did work under the feedback's budget (the loop went far past W).
    expect(infos.filter((i) => i.newEpoch).length).toBeGreaterThan(3);
    // One report per call, each applied to the one conversation and model; the first takes the observed ratio.
    expect(events).toHaveLength(200);
    expect(new Set(events.map((e) => e.conversation)).size).toBe(1);
    expect(events.every((e) => e.status === "applied" && e.model === "stub-model")).toBe(true);
    expect(events[0]).toMatchObject({ before: undefined });
    expect(events[0]!.after).toBeGreaterThan(1.2);
    // The budget of the second call is the window by the first report's ratio.
    expect(infos[1]!.budget).toBe(Math.floor((kWindow - kReserve) / (events[0]!.after! * 1.03)));
  }, 600_000);

  it("prepareStep reads the previous step's usage: every call after the first within the window", async () => {
    const outputs = corpusToolOutputs();
    const m = stubModel(inflated);
    const events: UsageEvent[] = [];
    const infos: CompactInfo[] = [];
    const r = await agentLoop(outputs, m.model, { prepareStep: { ...kProfile, onUsage: (e) => events.push(e), onCompact: (i) => infos.push(i) } });
    expect(r.steps).toHaveLength(200);
    expect(Math.max(...m.reported.slice(1))).toBeLessThanOrEqual(kWindow);
    // It compacted, repeatedly, and used most of the window between compactions.
    expect(infos.filter((i) => i.newEpoch).length).toBeGreaterThan(3);
    expect(Math.max(...m.reported)).toBeGreaterThan(kWindow * 0.6);
    // Steps 1..199 each report the step before.
    expect(events).toHaveLength(199);
    expect(events.every((e) => e.status === "applied")).toBe(true);
  }, 600_000);
});

describe("usage a provider does not report, or reports absurdly", () => {
  const messages: ModelMessage[] = [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Say hi." },
  ];
  const profile = { modelProfile: { contextWindow: 20_000, factor: 1.2, margin: 0.1 }, reserveTokens: 1000 };
  const profileBudget = Math.floor(19_000 / (1.2 * 1.1));

  async function twoCalls(total: unknown) {
    const events: UsageEvent[] = [];
    const infos: CompactInfo[] = [];
    const model = new MockLanguageModelV3({
      modelId: "stub-model",
      doGenerate: {
        content: [{ type: "text", text: "hi" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: total as number, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        },
        warnings: [],
      },
    });
    const wrapped = wrapLanguageModel({
      model,
      middleware: ctxfoldMiddleware({ ...profile, onUsage: (e) => events.push(e), onCompact: (i) => infos.push(i) }),
    });
    await generateText({ model: wrapped, messages, allowSystemInMessages: true });
    await generateText({ model: wrapped, messages, allowSystemInMessages: true });
    return { events, infos };
  }

  it("no usage: ignored with an event, the budget stays the profile's factor and margin", async () => {
    const { events, infos } = await twoCalls(undefined);
    expect(events.map((e) => [e.status, e.status === "ignored" ? e.reason : undefined])).toEqual([
      ["ignored", "no_usage"],
      ["ignored", "no_usage"],
    ]);
    expect(infos.map((i) => i.budget)).toEqual([profileBudget, profileBudget]);
  });

  it("NaN, negative or zero counts: ignored with their reasons, never a crash", async () => {
    for (const [total, reason] of [
      [Number.NaN, "not_finite"],
      [-40, "negative"],
      [0, "zero"],
    ] as const) {
      const { events, infos } = await twoCalls(total);
      expect(events[0]).toMatchObject({ status: "ignored", reason, before: undefined, after: undefined });
      expect(infos[1]!.budget).toBe(profileBudget);
    }
  });

  it("an absurd count is clamped to the bound (4× ctxfold's estimate), and says so", async () => {
    const { events, infos } = await twoCalls(1e12);
    expect(events[0]).toMatchObject({ status: "clamped", before: undefined, after: 4 });
    expect(events[0]!.status === "clamped" && events[0]!.observed).toBeGreaterThan(1e9);
    expect(infos[1]!.budget).toBe(Math.floor(19_000 / (4 * 1.03)));
  });

  it("a report far below the estimate (1 token) cannot lift the budget past the window: clamped to the floor, with an event", async () => {
    const { events, infos } = await twoCalls(1);
    expect(events[0]).toMatchObject({ status: "clamped", limit: "floor", before: undefined, reported: 1 });
    // The floor: one model token per token of ctxfold's measure, the feedback's margin included.
    expect(events[0]!.after).toBeCloseTo(1 / 1.03, 12);
    expect(infos[1]!.budget).toBeLessThanOrEqual(19_000);
    expect(infos[1]!.budget).toBe(19_000);
  });

  it("an agent loop whose provider reports 1 token at every call sends no prompt past the window", async () => {
    const outputs = Array.from({ length: 40 }, (_, k) =>
      Array.from({ length: 200 }, (_, j) => `step ${k} row ${j}: status=${(k * 131 + j * 17) % 1009} path=src/mod${j % 13}/file${k}.ts`).join("\n"),
    );
    const m = stubModel(() => ({ total: 1 }));
    const prompts: number[] = [];
    const events: UsageEvent[] = [];
    const measured = new MockLanguageModelV3({
      modelId: "stub-model",
      doGenerate: async (options) => {
        prompts.push(exactOf(options.prompt));
        return m.model.doGenerate(options);
      },
    });
    const r = await agentLoop(outputs, measured, { middleware: { ...kProfile, onUsage: (e) => events.push(e) } }, 40);
    expect(r.steps).toHaveLength(40);
    // The loop went far past the window, so the budget decided every late prompt.
    expect(outputs.reduce((n, o) => n + o.length, 0) / 4).toBeGreaterThan(3 * kWindow);
    expect(Math.max(...prompts), `largest prompt ${Math.max(...prompts)} > window ${kWindow}`).toBeLessThanOrEqual(kWindow - kReserve);
    expect(events.length).toBeGreaterThan(30);
    expect(events.every((e) => e.status === "clamped" && e.limit === "floor")).toBe(true);
  }, 120_000);

  it("prepareStep with a provider reporting 1 token at every step sends no prompt past the window", async () => {
    const outputs = Array.from({ length: 40 }, (_, k) =>
      Array.from({ length: 200 }, (_, j) => `step ${k} row ${j}: status=${(k * 131 + j * 17) % 1009} path=src/mod${j % 13}/file${k}.ts`).join("\n"),
    );
    const prompts: number[] = [];
    const m = stubModel((prompt) => (prompts.push(exactOf(prompt)), { total: 1 }));
    const events: UsageEvent[] = [];
    const r = await agentLoop(outputs, m.model, { prepareStep: { ...kProfile, onUsage: (e) => events.push(e) } }, 40);
    expect(r.steps).toHaveLength(40);
    expect(Math.max(...prompts), `largest prompt ${Math.max(...prompts)} > window ${kWindow}`).toBeLessThanOrEqual(kWindow - kReserve);
    expect(events.length).toBeGreaterThan(30);
    expect(events.every((e) => e.status === "clamped" && e.limit === "floor")).toBe(true);
  }, 120_000);

  it("streamText: the finish part's usage is read as the stream passes through unchanged; a stream without one reports no usage", async () => {
    const events: UsageEvent[] = [];
    const parts = (finish: boolean) => [
      { type: "stream-start" as const, warnings: [] },
      { type: "text-start" as const, id: "t" },
      { type: "text-delta" as const, id: "t", delta: "hi there" },
      { type: "text-end" as const, id: "t" },
      ...(finish
        ? [
            {
              type: "finish" as const,
              finishReason: { unified: "stop" as const, raw: "stop" },
              usage: { inputTokens: { total: 40, noCache: 40, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } },
            },
          ]
        : []),
    ];
    for (const finish of [true, false]) {
      const model = new MockLanguageModelV3({ modelId: "stub-model", doStream: async () => ({ stream: simulateReadableStream({ chunks: parts(finish) }) }) });
      const result = streamText({
        model: wrapLanguageModel({ model, middleware: ctxfoldMiddleware({ ...profile, onUsage: (e) => events.push(e) }) }),
        messages,
        allowSystemInMessages: true,
      });
      let text = "";
      for await (const t of result.textStream) text += t;
      expect(text).toBe("hi there");
    }
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ status: "applied", reported: 40, before: undefined });
    expect(events[1]).toMatchObject({ status: "ignored", reason: "no_usage" });
  });
});
