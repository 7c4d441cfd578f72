import { generateText, wrapLanguageModel, type LanguageModelMiddleware, type ModelMessage, type PrepareStepFunction } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { parseMessages } from "../../src/adapters/index.js";
import { ctxfoldMiddleware, ctxfoldPrepareStep, type AiSdkCallParams, type CompactInfo } from "../../src/integrations/ai-sdk.js";
import { rejection } from "../helpers.js";
import { agentRun, callPoints, checkPrompts, exactTokens, historyIn, providerPrompt, type RecordedCall } from "./harness.js";

// The SDK prints its warnings by default; the suite fails on console output.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const kBudget = 16_000;

/** A local model that records every prompt it receives and answers "ok". */
function stubModel(modelId = "my-local-model") {
  const model = new MockLanguageModelV3({
    modelId,
    doGenerate: {
      content: [{ type: "text", text: "ok" }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
      warnings: [],
    },
  });
  return { model, prompts: () => model.doGenerateCalls.map((c) => c.prompt) };
}

/** A middleware that records the prompt it is given (placed before ctxfold: what the model would get without it). */
function recorder(into: unknown[]): LanguageModelMiddleware {
  return { specificationVersion: "v3", transformParams: async ({ params }) => (into.push(params.prompt), params) };
}

const history = (run: ReturnType<typeof agentRun>, at: number) => historyIn(run, at, "ai-sdk") as ModelMessage[];

describe("ctxfoldMiddleware (wrapLanguageModel)", () => {
  it("a 200-step agent loop through wrapLanguageModel + generateText: every prompt within budget, valid, prefix stable between epochs", async () => {
    const run = agentRun(200);
    const { model, prompts } = stubModel();
    const inputs: unknown[] = [];
    const infos: CompactInfo[] = [];
    const middleware: LanguageModelMiddleware = ctxfoldMiddleware({ budget: kBudget, onCompact: (i) => infos.push(i) });
    const wrapped = wrapLanguageModel({ model, middleware: [recorder(inputs), middleware] });
    const points = callPoints(run);
    for (const at of points) await generateText({ model: wrapped, messages: history(run, at), allowSystemInMessages: true });

    const received = prompts();
    expect(received).toHaveLength(points.length);
    const calls: RecordedCall[] = inputs.map((input, k) => ({ input, received: received[k] }));
    const { epochs, overBudget } = checkPrompts(calls, kBudget, "ai-sdk");
    expect(overBudget).toBeGreaterThan(100);
    // One conversation, one session; every prefix break is a new epoch of it.
    expect(new Set(infos.map((i) => i.conversation)).size).toBe(1);
    expect(infos.filter((i) => i.newEpoch)).toHaveLength(epochs);
    // The model got the provider shape: part arrays, never string content, outside system messages.
    for (const prompt of received) for (const m of prompt) if (m.role !== "system") expect(Array.isArray(m.content)).toBe(true);
    // Under the budget the prompt is passed through as the very array the SDK built.
    expect(received[0]).toBe(inputs[0]);
  }, 180_000);

  it("transformParams leaves every other call option as it was", async () => {
    const run = agentRun(60);
    const at = callPoints(run).at(-1)!;
    const { model, prompts } = stubModel();
    const wrapped = wrapLanguageModel({ model, middleware: ctxfoldMiddleware({ budget: 4000 }) });
    await generateText({
      model: wrapped,
      messages: history(run, at),
      allowSystemInMessages: true,
      temperature: 0.3,
      maxOutputTokens: 77,
      headers: { "x-a": "1" },
      providerOptions: { other: { k: "v" } },
    });
    const call = model.doGenerateCalls[0]!;
    expect(call).toMatchObject({ temperature: 0.3, maxOutputTokens: 77, headers: { "x-a": "1" }, providerOptions: { other: { k: "v" } } });
    expect(exactTokens(parseMessages(prompts()[0], { format: "ai-sdk" }).messages)).toBeLessThanOrEqual(4000);
  });

  it("what it rebuilds takes the provider prompt's shape: text parts, file parts for images", async () => {
    const run = agentRun(60);
    const prompt = providerPrompt(history(run, callPoints(run).at(-1)!));
    // A ModelMessage-shaped user message (string content, an image part) handed on by another middleware.
    const user = prompt.findIndex((m) => m.role === "user");
    prompt[user] = {
      role: "user",
      content: [
        { type: "text", text: "Fix the bug in this screenshot." },
        { type: "image", image: "https://example.com/bug.png" },
      ],
    };
    prompt.push({ role: "user", content: "Also run the tests." });
    const { prompt: out } = await ctxfoldMiddleware({ budget: 4000 }).transformParams({ params: { prompt }, model: { modelId: "stub" } });
    expect(out).not.toBe(prompt);
    // The task (the first user message) is rebuilt, the summary of the merged turns appended to it.
    const task = out.find((m) => m.role === "user")!.content as unknown[];
    expect(task.length).toBeGreaterThan(2);
    expect(task.slice(0, 2)).toEqual([
      { type: "text", text: "Fix the bug in this screenshot." },
      { type: "file", data: "https://example.com/bug.png", mediaType: "image/*" },
    ]);
    expect(out.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "Also run the tests." }] });
    for (const m of out) if (m.role !== "system") expect(Array.isArray(m.content)).toBe(true);
  });

  it("an unknown context size without a budget is E_BAD_INPUT saying so; a known model id sets the budget", async () => {
    const run = agentRun(5);
    const messages = history(run, callPoints(run).at(-1)!);
    const unknown = stubModel("my-local-model");
    const e = await rejection(
      generateText({
        model: wrapLanguageModel({ model: unknown.model, middleware: ctxfoldMiddleware() }),
        messages,
        allowSystemInMessages: true,
        maxRetries: 0,
      }),
    );
    expect(e.code).toBe("E_BAD_INPUT");
    expect(e.path).toBe("budget");
    expect(e.message).toMatch(/context size of model "my-local-model" is unknown: pass budget/);
    expect(unknown.model.doGenerateCalls).toHaveLength(0);

    const known = stubModel("gpt-4o-mini");
    const infos: CompactInfo[] = [];
    await generateText({
      model: wrapLanguageModel({ model: known.model, middleware: ctxfoldMiddleware({ onCompact: (i) => infos.push(i) }) }),
      messages,
      allowSystemInMessages: true,
    });
    expect(infos[0]!.budget).toBe(128_000 - 4096);
    // A bad budget fails when the middleware is made, naming the field.
    expect(() => ctxfoldMiddleware({ budget: -1 })).toThrow(expect.objectContaining({ code: "E_BAD_INPUT", path: "budget" }));
  });

  it("a message shape it does not know fails naming the shape and where it is", async () => {
    const m = ctxfoldMiddleware({ budget: kBudget });
    const model = { modelId: "stub" };
    const call = (prompt: unknown[]) => rejection(m.transformParams({ params: { prompt } as AiSdkCallParams, model }));
    const ok = [
      { role: "system", content: "sys" },
      { role: "user", content: [{ type: "text", text: "hi" }] },
      { role: "assistant", content: [{ type: "text", text: "hello" }] },
    ];
    let e = await call([...ok, { role: "wizard", content: [{ type: "text", text: "abracadabra" }] }]);
    expect(e.code).toBe("E_UNKNOWN_ROLE");
    expect(e.path).toBe("prompt[3]");
    expect(e.message).toBe('prompt[3]: unknown message shape: role "wizard" (expected system, user, assistant or tool)');
    e = await call([...ok.slice(0, 1), { role: "user", content: 42 }]);
    expect(e.message).toBe("prompt[1]: unknown message shape: a user message whose content is a number (expected a string or an array of parts)");
    e = await call([{ role: "system", content: [{ type: "text", text: "sys" }] }]);
    expect(e.message).toMatch(/^prompt\[0\]: unknown message shape: a system message whose content is an array \(expected a string\)/);
    e = await call([...ok.slice(0, 2), { role: "assistant", content: [{ text: "no type" }] }]);
    expect(e.message).toBe("prompt[2].content[0]: unknown part shape: an object without a string type");
    e = await call(["just text"]);
    expect(e.path).toBe("prompt[0]");
    e = await call([...ok, { role: "assistant", content: [{ type: "tool-call", toolName: "read_file", input: {} }] }]);
    expect(e.code).toBe("E_SCHEMA");
    expect(e.path).toBe("prompt[3]"); // the adapter's schema error, named in the prompt's terms
    expect(e.message).toMatch(/toolCallId/);
    e = await rejection(ctxfoldPrepareStep({ budget: kBudget })({ messages: [...ok, { role: "wizard", content: "x" }] as never, model: "gpt-4o" }));
    expect(e.path).toBe("messages[3]");
    expect(e.message).toMatch(/unknown message shape: role "wizard"/);
  });

  it("two interleaved conversations keep separate sessions: by their prefix, or by the caller's id", async () => {
    // transformParams called as wrapLanguageModel calls it, on the prompts generateText would build.
    const model = { modelId: "my-local-model" };
    type Call = [who: string, prompt: AiSdkCallParams["prompt"], providerOptions: AiSdkCallParams["providerOptions"]];
    const loop = async (schedule: Call[]) => {
      const infos: CompactInfo[] = [];
      const m = ctxfoldMiddleware({ budget: kBudget, onCompact: (i) => infos.push(i) });
      const calls = new Map<string, RecordedCall[]>();
      for (const [who, prompt, providerOptions] of schedule) {
        const params = await m.transformParams({ type: "generate", params: { prompt, providerOptions }, model });
        calls.set(who, [...(calls.get(who) ?? []), { input: prompt, received: params.prompt }]);
      }
      for (const c of calls.values()) checkPrompts(c, kBudget, "ai-sdk");
      return new Set(infos.map((i) => i.conversation));
    };
    const a = agentRun(100, 9);
    const b = agentRun(100, 10);
    const pa = callPoints(a);
    const pb = callPoints(b);
    const interleaved: Call[] = [];
    for (let k = 0; k < Math.max(pa.length, pb.length); k++) {
      if (k < pa.length) interleaved.push(["a", providerPrompt(history(a, pa[k]!)), undefined]);
      if (k < pb.length) interleaved.push(["b", providerPrompt(history(b, pb[k]!)), undefined]);
    }
    expect((await loop(interleaved)).size).toBe(2);

    // The same conversation twice, one copy 30 calls behind: one prefix key, so only the ids
    // (providerOptions.ctxfold.conversationId) keep them apart.
    const lagging: Call[] = [];
    for (let k = 0; k < pa.length + 30; k++) {
      for (const [id, j] of [
        ["lead", k],
        ["lag", k - 30],
      ] as const) {
        if (j >= 0 && j < pa.length) lagging.push([id, providerPrompt(history(a, pa[j]!)), { ctxfold: { conversationId: id } }]);
      }
    }
    expect(await loop(lagging)).toEqual(new Set(["id:lead", "id:lag"]));
    // Without the ids they share one session, and the lagging copy breaks its prefix at every call.
    await expect(loop(lagging.map(([who, prompt]) => [who, prompt, undefined]))).rejects.toThrow(/prefix breaks/);
  }, 120_000);
});

describe("ctxfoldPrepareStep", () => {
  it("a 200-step agent loop: ModelMessage[] in and out, within budget, prefix stable", async () => {
    // prepareStep called as generateText calls it (the next test runs it inside generateText).
    const run = agentRun(200);
    const prepareStep = ctxfoldPrepareStep({ budget: kBudget });
    const calls: RecordedCall[] = [];
    for (const [stepNumber, at] of callPoints(run).entries()) {
      const messages = history(run, at);
      const r = await prepareStep({ messages, model: "my-local-model", stepNumber });
      calls.push({ input: messages, received: r.messages });
      if (stepNumber === 0) expect(r.messages).toBe(messages); // under the budget: the step's own array
    }
    const { epochs } = checkPrompts(calls, kBudget, "ai-sdk");
    expect(epochs).toBeGreaterThan(1);
  }, 120_000);

  it("inside generateText's prepareStep: the model receives the compacted messages", async () => {
    const run = agentRun(60);
    const budget = 12_000;
    const { model, prompts } = stubModel();
    const prepareStep: PrepareStepFunction = ctxfoldPrepareStep({ budget });
    const inputs: ModelMessage[][] = [];
    for (const at of callPoints(run)) {
      await generateText({
        model,
        messages: history(run, at),
        allowSystemInMessages: true,
        prepareStep: async (o) => (inputs.push(o.messages), prepareStep(o)),
      });
    }
    const received = prompts();
    expect(received).toHaveLength(inputs.length);
    checkPrompts(
      inputs.map((input, k) => ({ input, received: received[k] })),
      budget,
      "ai-sdk",
    );
  }, 120_000);

  it("an unknown model without a budget is E_BAD_INPUT; conversationId picks the session", async () => {
    const run = agentRun(5);
    const messages = history(run, callPoints(run).at(-1)!);
    const e = await rejection(ctxfoldPrepareStep()({ messages, model: { modelId: "my-local-model" } }));
    expect(e.message).toMatch(/context size of model "my-local-model" is unknown: pass budget/);
    const infos: CompactInfo[] = [];
    const step = ctxfoldPrepareStep({ budget: kBudget, conversationId: (o) => `step-${o.stepNumber}`, onCompact: (i) => infos.push(i) });
    await step({ messages, model: "x", stepNumber: 3 });
    expect(infos[0]!.conversation).toBe("id:step-3");
    await expect(ctxfoldPrepareStep({ budget: kBudget, conversationId: () => 42 as never })({ messages, model: "x" })).rejects.toMatchObject({
      code: "E_BAD_INPUT",
      path: "conversationId",
    });
  });
});
