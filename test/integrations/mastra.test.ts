import { Agent, TripWire } from "@mastra/core/agent";
import { noopLogger } from "@mastra/core/logger";
import { ProcessorRunner, type InputProcessor } from "@mastra/core/processors";
import { MockLanguageModelV3 } from "ai/test";
import { RequestContext } from "@mastra/core/request-context";
import { createTool } from "@mastra/core/tools";
import type { ModelMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createRng, syntheticText } from "../../src/gen/text.js";
import type { AiSdkPromptMessage, CompactInfo } from "../../src/integrations/ai-sdk.js";
import { CtxfoldProcessor, type MastraLLMRequestArgs } from "../../src/integrations/mastra.js";
import { rejection } from "../helpers.js";
import { agentRun, callPoints, checkPrompts, historyIn, providerPrompt, type RecordedCall } from "./harness.js";

const kBudget = 16_000;

const promptAt = (run: ReturnType<typeof agentRun>, at: number) => providerPrompt(historyIn(run, at, "ai-sdk") as ModelMessage[]);

/** An input processor that records the prompt it is given (placed before ctxfold: what the model would get without it). */
function recorder(into: unknown[]): InputProcessor {
  return { id: "recorder", processLLMRequest: ({ prompt }) => void into.push(prompt) };
}

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;

/** A local LanguageModelV3 that records every prompt it receives; `answer(n)` makes its n-th response. */
function stubModel(answer: (n: number) => Pick<GenerateResult, "content" | "finishReason">, modelId = "my-local-model") {
  const model: MockLanguageModelV3 = new MockLanguageModelV3({
    modelId,
    doGenerate: async () => ({
      ...answer(model.doGenerateCalls.length),
      usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
      warnings: [],
    }),
  });
  return { model, prompts: () => model.doGenerateCalls.map((c) => c.prompt) as unknown as AiSdkPromptMessage[][] };
}

const ok = (): Pick<GenerateResult, "content" | "finishReason"> => ({
  content: [{ type: "text", text: "ok" }],
  finishReason: { unified: "stop", raw: "stop" },
});

/** A Mastra RequestContext holding `values`. */
function contextOf(values: Record<string, unknown>): RequestContext {
  const rc = new RequestContext();
  for (const [k, v] of Object.entries(values)) rc.set(k, v);
  return rc;
}

/** A runner over `processors`, as an agent holds one for its input processors. */
const runnerOf = (processors: InputProcessor[]) => new ProcessorRunner({ inputProcessors: processors, logger: noopLogger, agentName: "test" });

describe("CtxfoldProcessor", () => {
  it("is a Mastra processor named ctxfold with TokenLimiter's request-time hook", () => {
    const p: InputProcessor = new CtxfoldProcessor({ budget: kBudget }); // what Agent's inputProcessors takes
    expect(p.id).toBe("ctxfold");
    expect(p.name).toBe("ctxfold");
    expect(typeof p.processLLMRequest).toBe("function");
    expect(p.processInput).toBeUndefined(); // see the module comment
  });

  it("a 200-step agent loop through Mastra's processor runner: every prompt within budget, valid, prefix stable between epochs", async () => {
    const run = agentRun(200);
    const inputs: unknown[] = [];
    const infos: CompactInfo[] = [];
    const ctxfold = new CtxfoldProcessor({ budget: kBudget, onCompact: (i) => infos.push(i) });
    const runner = runnerOf([recorder(inputs), ctxfold]);
    const { model, prompts } = stubModel(ok);
    const points = callPoints(run);
    for (const [stepNumber, at] of points.entries()) {
      // What the agent loop does before each model call: runProcessLLMRequest, then the model.
      const { prompt } = await runner.runProcessLLMRequest({
        prompt: promptAt(run, at) as never,
        model,
        stepNumber,
        steps: [],
        requestContext: new RequestContext(),
      });
      await model.doGenerate({ prompt });
    }
    const received = prompts();
    const calls: RecordedCall[] = inputs.map((input, k) => ({ input, received: received[k] }));
    const { epochs, overBudget } = checkPrompts(calls, kBudget, "ai-sdk");
    expect(overBudget).toBeGreaterThan(100);
    expect(infos.filter((i) => i.newEpoch)).toHaveLength(epochs);
    expect(ctxfold.sessions).toBe(1);
    // Under the budget the prompt goes on as it came (TokenLimiter's "no change": undefined).
    expect(received[0]).toBe(inputs[0]);
    for (const prompt of received) for (const m of prompt) if (m.role !== "system") expect(Array.isArray(m.content)).toBe(true);
  }, 120_000);

  it("in a live Agent's tool loop, the model receives the compacted prompt at every step", async () => {
    const steps = 50;
    const budget = 12_000;
    const rng = createRng(7);
    const files = Array.from({ length: steps }, () => syntheticText("code", 2400, rng));
    const { model, prompts } = stubModel((n) =>
      n < steps
        ? {
            content: [
              { type: "text", text: `Reading file ${n}.` },
              { type: "tool-call", toolCallId: `call_${n}`, toolName: "readFile", input: JSON.stringify({ path: `src/f${n}.ts` }) },
            ],
            finishReason: { unified: "tool-calls", raw: "tool_calls" },
          }
        : { content: [{ type: "text", text: "Done." }], finishReason: { unified: "stop", raw: "stop" } },
    );
    const readFile = createTool({
      id: "readFile",
      description: "Read a file",
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => files[Number(/\d+/.exec(path)![0]) % steps]!,
    });
    const inputs: unknown[] = [];
    const infos: CompactInfo[] = [];
    const agent = new Agent({
      id: "coder",
      name: "coder",
      instructions: "You are a careful coding agent.",
      model,
      tools: { readFile },
      inputProcessors: [recorder(inputs), new CtxfoldProcessor({ budget, onCompact: (i) => infos.push(i) })],
    });
    const result = await agent.generate("Read every file of the project.", { maxSteps: steps + 1 });
    expect(result.text).toContain("Done.");
    const received = prompts();
    expect(received).toHaveLength(steps);
    expect(inputs).toHaveLength(steps);
    checkPrompts(
      inputs.map((input, k) => ({ input, received: received[k] })),
      budget,
      "ai-sdk",
    );
    // Mastra stamps createdAt into provider options; untouched messages keep them.
    expect(JSON.stringify(received.at(-1)![1])).toContain('"mastra":{"createdAt"');
    expect(new Set(infos.map((i) => i.conversation)).size).toBe(1);
  }, 120_000);

  it("an unknown context size without a budget is E_BAD_INPUT saying so; a known model id sets the budget", async () => {
    const run = agentRun(5);
    const prompt = promptAt(run, callPoints(run).at(-1)!);
    const e = await rejection(new CtxfoldProcessor().processLLMRequest({ prompt, model: { modelId: "my-local-model" } }));
    expect(e.code).toBe("E_BAD_INPUT");
    expect(e.path).toBe("budget");
    expect(e.message).toMatch(/context size of model "my-local-model" is unknown: pass budget/);
    // Through an agent, the call fails with that error, before the model is called.
    const { model, prompts } = stubModel(ok);
    const agent = new Agent({ id: "a", name: "a", instructions: "sys", model, inputProcessors: [new CtxfoldProcessor()] });
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined); // Mastra logs the failed step before rethrowing
    await expect(agent.generate("hello")).rejects.toMatchObject({ code: "E_BAD_INPUT", path: "budget" });
    expect(logged).toHaveBeenCalled();
    expect(prompts()).toHaveLength(0);
    // Model ids as Mastra gives them: a model object, a router id, a config.
    for (const m of [{ modelId: "gpt-4o" }, "openai/gpt-4o", { id: "openai/gpt-4o" }]) {
      const infos: CompactInfo[] = [];
      await new CtxfoldProcessor({ onCompact: (i) => infos.push(i) }).processLLMRequest({ prompt, model: m });
      expect(infos[0]!.budget).toBe(128_000 - 4096);
    }
  }, 60_000);

  it("a message shape it does not know fails naming the shape and where it is", async () => {
    const p = new CtxfoldProcessor({ budget: kBudget });
    const ok: AiSdkPromptMessage[] = [
      { role: "system", content: "sys" },
      { role: "user", content: [{ type: "text", text: "hi" }] },
      { role: "assistant", content: [{ type: "text", text: "hello" }] },
    ];
    let e = await rejection(p.processLLMRequest({ prompt: [...ok, { role: "wizard", content: [] }] }));
    expect(e.code).toBe("E_UNKNOWN_ROLE");
    expect(e.message).toBe('prompt[3]: unknown message shape: role "wizard" (expected system, user, assistant or tool)');
    e = await rejection(p.processLLMRequest({ prompt: [...ok, { role: "tool", content: "not parts" }] }));
    expect(e.message).toBe("prompt[3]: unknown message shape: a tool message whose content is a string (expected an array of parts)");
    e = await rejection(p.processLLMRequest({ prompt: { messages: ok } as never }));
    expect(e.message).toBe("prompt: expected an array of messages, got an object");
  });

  it("two interleaved conversations keep separate sessions: by memory thread, or by prefix", async () => {
    // The same conversation in two threads, one 30 calls behind: one prefix key, so only the
    // threads keep them apart (sharing a session, the lagging copy would break its prefix at
    // every call); and two different conversations with no thread, by their prefix keys.
    const a = agentRun(100, 9);
    const b = agentRun(100, 10);
    const pa = callPoints(a);
    const pb = callPoints(b);
    const schedule: [string, AiSdkPromptMessage[], RequestContext | undefined][] = [];
    const thread = (id: string) => contextOf({ mastra__threadId: id });
    for (let k = 0; k < pa.length + 30; k++) {
      if (k < pa.length) schedule.push(["lead", promptAt(a, pa[k]!), thread("t-lead")]);
      if (k >= 30) schedule.push(["lag", promptAt(a, pa[k - 30]!), thread("t-lag")]);
      if (k < pb.length) schedule.push(["other", promptAt(b, pb[k]!), undefined]);
    }
    const infos: CompactInfo[] = [];
    const p = new CtxfoldProcessor({ budget: kBudget, onCompact: (i) => infos.push(i) });
    const calls = new Map<string, RecordedCall[]>();
    for (const [who, prompt, requestContext] of schedule) {
      const args: MastraLLMRequestArgs = { prompt, model: { modelId: "stub" }, requestContext };
      const r = await p.processLLMRequest(args);
      calls.set(who, [...(calls.get(who) ?? []), { input: prompt, received: r?.prompt ?? prompt }]);
    }
    for (const c of calls.values()) checkPrompts(c, kBudget, "ai-sdk");
    expect(p.sessions).toBe(3);
    const conversations = [...new Set(infos.map((i) => i.conversation))];
    expect(conversations.filter((c) => c.startsWith("thread:t-lead:"))).toHaveLength(1);
    expect(conversations.filter((c) => c.startsWith("thread:t-lag:"))).toHaveLength(1);
    expect(conversations.filter((c) => c.startsWith("key:"))).toHaveLength(1);
    // The caller's id wins over the thread.
    const q = new CtxfoldProcessor({
      budget: kBudget,
      conversationId: (args) => args.requestContext?.get("user") as string | undefined,
      onCompact: (i) => infos.push(i),
    });
    await q.processLLMRequest({ prompt: promptAt(a, pa[3]!), requestContext: contextOf({ user: "u1", mastra__threadId: "t" }) });
    expect(infos.at(-1)!.conversation).toBe("id:u1");
  }, 120_000);

  it("a budget even the messages that must stay cannot meet ends the run with a TripWire, as TokenLimiter's refusal", async () => {
    const run = agentRun(20);
    const prompt = promptAt(run, callPoints(run).at(-1)!);
    const err = await runnerOf([new CtxfoldProcessor({ budget: 300 })])
      .runProcessLLMRequest({ prompt: prompt as never, model: { modelId: "x" }, stepNumber: 0, steps: [] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(TripWire);
    expect((err as TripWire).message).toMatch(/^ctxfold: the prompt cannot be brought within the budget of 300 tokens/);
    expect((err as TripWire).options).toMatchObject({ retry: false, metadata: { budget: 300 } });
    // Without an abort (called outside an agent) it is E_OVER_BUDGET; told to send it anyway, the best prompt goes on.
    await expect(new CtxfoldProcessor({ budget: 300 }).processLLMRequest({ prompt })).rejects.toMatchObject({ code: "E_OVER_BUDGET", path: "prompt" });
    const r = await new CtxfoldProcessor({ budget: 300, onOverBudget: "return" }).processLLMRequest({ prompt });
    expect(r?.prompt.length).toBeLessThan(prompt.length);
  }, 60_000);
});
