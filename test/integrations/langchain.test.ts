import { AIMessage, AIMessageChunk, ChatMessage, HumanMessage, isBaseMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableLambda, RunnableSequence } from "@langchain/core/runnables";
import { describe, expect, it } from "vitest";
import { renderMessages } from "../../src/adapters/index.js";
import { CtxfoldError } from "../../src/errors.js";
import type { LangchainMessage } from "../../src/adapters/langchain.js";
import type { Message } from "../../src/model/schema.js";
import { compactLangChainMessages, ctxfoldRunnable, langChainCompactor } from "../../src/integrations/langchain.js";
import type { UsageEvent } from "../../src/integrations/common.js";
import { agentRun, callPoints, checkPrompts, dictsOf, exactTokens, type RecordedCall } from "./harness.js";
import { parseMessages } from "../../src/adapters/index.js";

const budget = 16_000;

/** The run's messages as LangChain instances, one per canonical message (as an agent's state holds them). */
function instancesOf(run: readonly Message[]): BaseMessage[] {
  const dicts = renderMessages(run, "langchain") as LangchainMessage[];
  expect(dicts.length).toBe(run.length); // one result per tool message: indices line up
  return dicts.map((d) => {
    const { type, ...fields } = d;
    switch (type) {
      case "system":
        return new SystemMessage(fields as never);
      case "human":
        return new HumanMessage(fields as never);
      case "ai":
        return new AIMessage(fields as never);
      case "tool":
        return new ToolMessage(fields as never);
      default:
        throw new Error(`unexpected kind ${String(type)}`);
    }
  });
}

/** A chat model stand-in that records every prompt it receives. */
function stubModel() {
  const prompts: BaseMessage[][] = [];
  const model = RunnableLambda.from(async (messages: BaseMessage[]) => {
    prompts.push(messages);
    return new AIMessage("ok");
  });
  return { model, prompts };
}

/** Prompts whose messages are not the previous prompt's very objects, message for message, plus new ones. */
function identityBreaks(prompts: readonly BaseMessage[][]): number {
  let breaks = 0;
  for (let k = 1; k < prompts.length; k++) {
    const prev = prompts[k - 1];
    if (!(prev.length <= prompts[k].length && prev.every((m, j) => m === prompts[k][j]))) breaks++;
  }
  return breaks;
}

describe("ctxfoldRunnable: the 200-step agent loop through a LangChain chain", () => {
  it("every prompt within budget, valid, its prefix the very same objects between epochs, in the same classes", async () => {
    const run = agentRun(200);
    const history = instancesOf(run);
    // A target at which stage 2's shortened outputs make some epochs, so that changed
    // ToolMessages are among the prompts (at the default, stage 3 takes the old steps whole).
    const compact = await ctxfoldRunnable<BaseMessage>({ budget, targetRatio: 0.3 });
    expect(compact).toBeInstanceOf(RunnableLambda);
    const { model, prompts } = stubModel();
    const chain = compact.pipe(model);
    const calls: RecordedCall[] = [];
    const points = callPoints(run);
    for (const at of points) {
      const input = history.slice(0, at);
      const answer = await chain.invoke(input, { configurable: { thread_id: "loop" } });
      expect((answer as AIMessage).content).toBe("ok");
      calls.push({ input: dictsOf(input), received: dictsOf(prompts.at(-1)!) });
    }
    expect(prompts.length).toBe(points.length);
    const { epochs, overBudget } = checkPrompts(calls, budget, "langchain");
    expect(overBudget).toBeGreaterThan(100);
    // Between epochs the model gets the previous prompt's objects themselves, not equal copies.
    expect(identityBreaks(prompts)).toBe(epochs);
    // Kept messages are the caller's objects; changed or made ones are instances of the right class.
    const inputs = new Set<BaseMessage>(history);
    let made = 0;
    for (const p of prompts) {
      for (const m of p) {
        expect(isBaseMessage(m)).toBe(true);
        if (inputs.has(m)) continue;
        made++;
        const cls = { human: HumanMessage, ai: AIMessage, system: SystemMessage, tool: ToolMessage }[m.getType() as "human" | "ai" | "system" | "tool"];
        expect(m).toBeInstanceOf(cls);
      }
    }
    expect(made).toBeGreaterThan(0);
    expect(prompts.flat().some((m) => m instanceof ToolMessage && !inputs.has(m))).toBe(true);
  }, 120_000);

  it("keeps two interleaved conversations (thread ids) in separate sessions", async () => {
    const runs = [agentRun(60, 21), agentRun(60, 22)];
    const histories = runs.map(instancesOf);
    // The exact-typed form: the plain function in the caller's own RunnableLambda.
    const compact = RunnableLambda.from(langChainCompactor<BaseMessage>({ budget }));
    const stubs = [stubModel(), stubModel()];
    const chains = stubs.map((s) => compact.pipe(s.model));
    const calls: RecordedCall[][] = [[], []];
    const points = runs.map(callPoints);
    for (let k = 0; k < Math.max(points[0].length, points[1].length); k++) {
      for (const c of [0, 1]) {
        const at = points[c][k];
        if (at === undefined) continue;
        const input = histories[c].slice(0, at);
        await chains[c].invoke(input, { configurable: { thread_id: `thread-${c}` } });
        calls[c].push({ input: dictsOf(input), received: dictsOf(stubs[c].prompts.at(-1)!) });
      }
    }
    // One shared session would start a new epoch at every switch; each keeps its own prefix.
    for (const c of [0, 1]) checkPrompts(calls[c], budget, "langchain");
  }, 120_000);

  it("fits in a prompt-template chain, and as a plain function where LangChain coerces functions", async () => {
    const compact = await ctxfoldRunnable<BaseMessage>({ budget: 4000 });
    const { model, prompts } = stubModel();
    const prompt = ChatPromptTemplate.fromMessages([["system", "You are terse."], new MessagesPlaceholder("history")]);
    const history = instancesOf(agentRun(30, 5)).slice(1, 60);
    await prompt.pipe(compact).pipe(model).invoke({ history });
    const got = prompts[0];
    expect(got[0]).toBeInstanceOf(SystemMessage);
    expect(exactTokens(parseMessages(dictsOf(got), { format: "langchain" }).messages)).toBeLessThanOrEqual(4000);
    // The plain function works where LangChain coerces functions.
    const seq = RunnableSequence.from([langChainCompactor<BaseMessage>({ budget: 4000 }), model]);
    await seq.invoke(history);
    expect(prompts[1].length).toBeGreaterThan(0);
  }, 60_000);
});

describe("compactLangChainMessages", () => {
  it("returns untouched messages as the same objects, dicts as dicts", async () => {
    const history = instancesOf(agentRun(3, 2));
    const out = await compactLangChainMessages(history, { budget: 100_000, conversationId: "small" });
    expect(out.length).toBe(history.length);
    out.forEach((m, j) => expect(m).toBe(history[j]));
    const dicts = renderMessages(agentRun(40, 3), "langchain") as LangchainMessage[];
    const small = await compactLangChainMessages(dicts, { budget: 6000 });
    expect(small.some((d) => !dicts.includes(d))).toBe(true); // compacted
    for (const d of small) expect(isBaseMessage(d)).toBe(false);
    expect(exactTokens(parseMessages(small, { format: "langchain" }).messages)).toBeLessThanOrEqual(6000);
  });

  it("an unknown context size without a budget says so", async () => {
    const messages = [new HumanMessage("hi")];
    await expect(compactLangChainMessages(messages, { model: "my-local-model" })).rejects.toThrow(
      /budget: the context size of model "my-local-model" is unknown: pass budget/,
    );
    await expect(compactLangChainMessages(messages)).rejects.toThrow(/context size of model "\(unnamed\)" is unknown/);
    const err = await ctxfoldRunnable({ model: "my-local-model" }).catch((e: unknown) => e);
    expect(CtxfoldError.isInstance(err) && err.code).toBe("E_BAD_INPUT");
    expect((err as Error).message).toMatch(/context size of model "my-local-model" is unknown/);
    // A known model needs no budget, and `model` / `conversationId` are the integration's, not the compactor's (the snippet in docs/integrations.md).
    await expect(compactLangChainMessages(messages, { model: "gpt-4o" })).resolves.toEqual(messages);
    await expect((await ctxfoldRunnable({ model: "gpt-4o", conversationId: "c" })).invoke(messages)).resolves.toEqual(messages);
  });

  it("names an unknown message shape and where it is", async () => {
    const ok = [new SystemMessage("sys"), new HumanMessage("task")];
    const fail = async (bad: unknown, index = 2) => {
      const err = await compactLangChainMessages([...ok, bad] as BaseMessage[], { budget: 1000 }).catch((e: unknown) => e);
      expect(CtxfoldError.isInstance(err), String(err)).toBe(true);
      expect((err as CtxfoldError).path).toBe(`messages[${index}]`);
      return err as CtxfoldError;
    };
    const generic = await fail(new ChatMessage({ content: "x", role: "critic" }));
    expect(generic.code).toBe("E_UNKNOWN_ROLE");
    expect(generic.message).toMatch(/ChatMessage \(type "generic"\) has no ctxfold form/);
    expect((await fail("hello")).message).toMatch(/a string is a LangChain message-like/);
    expect((await fail(["human", "hello"])).message).toMatch(/\[role, content\] tuple/);
    expect((await fail(new AIMessage("x").toJSON())).message).toMatch(/serialised LangChain AIMessage .*load\(\)/);
    expect((await fail({ type: "human", data: { content: "x" } })).message).toMatch(/stored LangChain message/);
    expect((await fail(null)).message).toMatch(/got null/);
    expect((await fail({ type: "wizard", content: "x" })).message).toMatch(/unknown langchain message type "wizard"/);
    const notList = await compactLangChainMessages({ messages: ok } as never, { budget: 1000 }).catch((e: unknown) => e);
    expect((notList as CtxfoldError).message).toMatch(
      /^messages: expected an array of LangChain messages or a ChatPromptValue, got an object with keys messages/,
    );
  });

  it("reads chunks, and gives a changed chunk back as its message class", async () => {
    const run = agentRun(40, 4);
    const history: BaseMessage[] = instancesOf(run).map((m) =>
      m instanceof AIMessage ? new AIMessageChunk({ content: m.content, tool_calls: m.tool_calls, id: m.id }) : m,
    );
    const out = await compactLangChainMessages(history, { budget: 6000, conversationId: "chunks" });
    expect(out.length).toBeGreaterThan(0);
    for (const m of out)
      expect(history.includes(m) || m instanceof HumanMessage || m instanceof AIMessage || m instanceof ToolMessage || m instanceof SystemMessage).toBe(true);
    expect(exactTokens(parseMessages(dictsOf(out), { format: "langchain" }).messages)).toBeLessThanOrEqual(6000);
  });
});

describe("the LangChain step reads the provider's usage from the reply", () => {
  it("a reply reporting 1 input token is clamped to the window floor: the next prompt stays within the window", async () => {
    const run = agentRun(120, 38);
    const at = callPoints(run);
    const events: UsageEvent[] = [];
    const window = 20_000;
    const fn = langChainCompactor<BaseMessage>({ model: "my-local-model", contextWindow: window, reserveTokens: 1000, onUsage: (e) => events.push(e) });
    const history = instancesOf(run).slice(0, at[2]!);
    await fn(history);
    // The run's own reply to that call, carrying the report.
    const next = instancesOf(run);
    const reply = next[at[2]!] as AIMessage;
    next[at[2]!] = new AIMessage({
      content: reply.content,
      tool_calls: reply.tool_calls,
      usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
    });
    expect(exactTokens(parseMessages(dictsOf(next), { format: "langchain" }).messages)).toBeGreaterThan(2 * window);
    const out = await fn(next);
    expect(events[0]).toMatchObject({ status: "clamped", limit: "floor", reported: 1 });
    expect(exactTokens(parseMessages(dictsOf(out), { format: "langchain" }).messages)).toBeLessThanOrEqual(window - 1000);
  });

  it("the AIMessage after the previous call's input carries usage_metadata.input_tokens: the previous prompt's count", async () => {
    const run = agentRun(30, 36);
    const at = callPoints(run);
    const events: UsageEvent[] = [];
    const fn = langChainCompactor<BaseMessage>({ model: "my-local-model", contextWindow: 50_000, onUsage: (e) => events.push(e) });
    const history = instancesOf(run).slice(0, at[2]!);
    await fn(history);
    const reply = new AIMessage({ content: "ok", usage_metadata: { input_tokens: 5000, output_tokens: 2, total_tokens: 5002 } });
    const second = [...history, reply, new HumanMessage("Go on.")];
    await fn(second);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ status: "applied", reported: 5000, model: "my-local-model", before: undefined });
    expect(events[0]!.after).toBeCloseTo(5000 / events[0]!.estimated!, 12);
    // A reply without usage_metadata is a report of none; a human message there is no reply (nothing read).
    await fn([...second, new AIMessage("no usage here"), new HumanMessage("Again.")]);
    expect(events[1]).toMatchObject({ status: "ignored", reason: "no_usage" });
    await fn([...second, new AIMessage("no usage here"), new HumanMessage("Again."), new HumanMessage("And again.")]);
    expect(events).toHaveLength(2);
  });
});
