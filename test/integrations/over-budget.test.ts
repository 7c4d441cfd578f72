/**
 * A prompt no compaction can bring within its budget (what must stay, the latest user message,
 * is larger): every integration says so with E_OVER_BUDGET by default, and hands the prompt back
 * as the compactor left it under `onOverBudget: "return"`.
 */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { CtxfoldError } from "../../src/errors.js";
import { refuseOverBudget } from "../../src/integrations/budget.js";
import { ctxfoldMiddleware, ctxfoldPrepareStep, type CompactInfo } from "../../src/integrations/ai-sdk.js";
import { compactLangChainMessages, ctxfoldMiddleware as langChainMiddleware, langChainCompactor } from "../../src/integrations/langchain.js";
import { CtxfoldProcessor } from "../../src/integrations/mastra.js";
import { compactAnthropicRequest, compactOpenAIRequest, compactOpenAIResponsesRequest } from "../../src/integrations/requests.js";

const budget = 1000;
/** ~4,000 tokens of a user's paste: it must stay, and it alone is over the budget. */
const paste = Array.from({ length: 400 }, (_, i) => `row ${i}: the parser fails on input ${i * 7} with code E${i % 17}`).join("\n");
const system = "You are a careful coding agent.";

async function refusal(p: Promise<unknown>, path: string): Promise<CtxfoldError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(CtxfoldError.isInstance(e), `expected a CtxfoldError, got ${String(e)}`).toBe(true);
  expect(e).toMatchObject({ code: "E_OVER_BUDGET", path });
  expect((e as Error).message).toMatch(new RegExp(`budget of ${budget} tokens: it takes \\d+ after compaction, of which \\d+ must stay`));
  expect((e as Error).message).toContain('onOverBudget: "return"');
  return e as CtxfoldError;
}

describe("E_OVER_BUDGET's message", () => {
  const said = (criticalTokens: number, tokensAfter: number) => {
    try {
      refuseOverBudget({}, { status: "budget_infeasible", budget, tokensAfter, criticalTokens }, "body.messages");
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error("not refused");
  };

  it("says whether what must stay fits without the summary of what was removed", () => {
    expect(said(1200, 1240)).toContain(
      "it takes 1240 after compaction, of which 1200 must stay (system messages, the latest user message, unanswered tool calls); raise",
    );
    expect(said(990, 1030)).toContain(
      "of which 990 must stay (system messages, the latest user message, unanswered tool calls), which fit, but not with what ctxfold keeps of the rest (the summary whose ref names what was removed); raise",
    );
  });
});

describe("request helpers over their budget", () => {
  const chat = {
    model: "gpt-4o",
    messages: [
      { role: "system", content: system },
      { role: "user", content: paste },
    ],
  };
  const responses = { model: "gpt-4o", input: [{ role: "user", content: paste }], instructions: system };
  const anthropic = { model: "claude-sonnet-4-5", max_tokens: 1024, system, messages: [{ role: "user", content: paste }] };

  it("throw E_OVER_BUDGET by default, naming the body's messages", async () => {
    await refusal(compactOpenAIRequest(chat, { budget }), "body.messages");
    await refusal(compactOpenAIResponsesRequest(responses, { budget }), "body.input");
    await refusal(compactAnthropicRequest(anthropic, { budget }), "body.messages");
  });

  it('onOverBudget: "return" hands the over-budget body back; a bad value is named', async () => {
    await expect(compactOpenAIRequest(chat, { budget, onOverBudget: "return" })).resolves.toEqual(chat);
    await expect(compactOpenAIResponsesRequest(responses, { budget, onOverBudget: "return" })).resolves.toEqual(responses);
    await expect(compactAnthropicRequest(anthropic, { budget, onOverBudget: "return" })).resolves.toEqual(anthropic);
    await expect(compactOpenAIRequest(chat, { budget, onOverBudget: "ignore" as never })).rejects.toMatchObject({ code: "E_BAD_INPUT", path: "onOverBudget" });
  });
});

describe("the AI SDK middleware, prepareStep and Mastra's processor over their budget", () => {
  const prompt = [
    { role: "system", content: system },
    { role: "user", content: [{ type: "text", text: paste }] },
  ];
  const model = { modelId: "my-local-model" };

  it('the middleware throws E_OVER_BUDGET after onCompact reported it; with "return" the prompt goes on', async () => {
    const infos: CompactInfo[] = [];
    await refusal(ctxfoldMiddleware({ budget, onCompact: (i) => infos.push(i) }).transformParams({ params: { prompt }, model }), "prompt");
    expect(infos.map((i) => i.status)).toEqual(["budget_infeasible"]);
    const params = { prompt };
    await expect(ctxfoldMiddleware({ budget, onOverBudget: "return" }).transformParams({ params, model })).resolves.toBe(params);
  });

  it("prepareStep throws E_OVER_BUDGET at messages", async () => {
    const messages = [
      { role: "system", content: system },
      { role: "user", content: paste },
    ];
    await refusal(ctxfoldPrepareStep({ budget })({ messages, model: "my-local-model" }), "messages");
    await expect(ctxfoldPrepareStep({ budget, onOverBudget: "return" })({ messages, model: "my-local-model" })).resolves.toEqual({ messages });
  });

  it("Mastra aborts when the call can (its typed refusal), else throws E_OVER_BUDGET", async () => {
    const reasons: string[] = [];
    await new CtxfoldProcessor({ budget }).processLLMRequest({ prompt, model, abort: (reason: string) => void reasons.push(reason) } as never);
    expect(reasons).toHaveLength(1);
    await refusal(new CtxfoldProcessor({ budget }).processLLMRequest({ prompt, model }), "prompt");
    await expect(new CtxfoldProcessor({ budget, onOverBudget: "return" }).processLLMRequest({ prompt, model })).resolves.toBeUndefined();
  });
});

describe("LangChain over its budget", () => {
  const messages = () => [new SystemMessage(system), new HumanMessage(paste)];

  it("compactLangChainMessages, the compaction step and the agent middleware throw E_OVER_BUDGET by default", async () => {
    await refusal(compactLangChainMessages(messages(), { budget }), "messages");
    await refusal(langChainCompactor({ budget })(messages()), "messages");
    const list = messages();
    const handler = async () => "answer";
    await refusal(langChainMiddleware({ budget }).wrapModelCall({ messages: list.slice(1), systemMessage: list[0] } as never, handler), "messages");
  });

  it('onOverBudget: "return" hands the messages back', async () => {
    const list = messages();
    const out = await compactLangChainMessages(list, { budget, onOverBudget: "return" });
    expect(out).toHaveLength(2);
    expect(out.map((m) => m.getType())).toEqual(["system", "human"]);
  });
});
