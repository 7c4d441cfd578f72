// ctxfoldMiddleware through a real createAgent loop: a stub chat model replays a recorded run
// (its tool calls step by step, then a final answer), real tools return the run's recorded
// outputs, and the agent's own loop calls the model, the middleware and the tools. A recorder
// middleware in front of ctxfold sees each call's uncompacted request; the stub sees what the
// model would get.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { createAgent, createMiddleware, tool } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseMessages, renderMessages } from "../../src/adapters/index.js";
import type { OpenAIChatWire } from "../../src/adapters/index.js";
import { CtxfoldError } from "../../src/errors.js";
import { generateRun } from "../../src/gen/run.js";
import type { UsageEvent } from "../../src/integrations/common.js";
import { ctxfoldMiddleware } from "../../src/integrations/langchain.js";
import { kDefaultRecallHint } from "../../src/policy/recall-hint.js";
import type { Message } from "../../src/model/schema.js";
import { newViolations, validate } from "../../src/validate/index.js";
import { corpusLines, type CorpusRun } from "../helpers-corpus.js";
import { hasCorpus, kNoCorpusReason } from "../helpers.js";
import { checkPrompts, dictsOf, exactTokens, type RecordedCall } from "./harness.js";

// ---------------------------------------------------------------------------------------------
// A recorded run as the stub model replays it.

interface Step {
  text: string;
  calls: { id: string; name: string; args: Record<string, unknown> }[];
}

interface Script {
  system: string;
  task: string;
  steps: Step[];
  /** Each call's recorded output, by call id. */
  outputs: Map<string, string>;
  answer: string;
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p: { text?: unknown }) => (typeof p.text === "string" ? p.text : "")).join("")
      : "";

/** The script of an OpenAI Chat run: its system prompt, its task, then its tool steps until the next user message. */
function scriptOf(messages: OpenAIChatWire): Script {
  const script: Script = { system: "", task: "", steps: [], outputs: new Map(), answer: "Done." };
  for (const m of messages) {
    if (m.role === "system" && script.task === "") script.system = textOf(m.content);
    else if (m.role === "user") {
      if (script.task !== "") break;
      script.task = textOf(m.content);
    } else if (m.role === "assistant" && m.tool_calls?.length) {
      const calls = m.tool_calls.map((c) => ({
        id: c.id,
        name: (c as { function: { name: string } }).function.name,
        args: JSON.parse((c as { function: { arguments: string } }).function.arguments || "{}") as Record<string, unknown>,
      }));
      script.steps.push({ text: textOf(m.content), calls });
    } else if (m.role === "assistant") script.answer = textOf(m.content) || script.answer;
    else if (m.role === "tool") script.outputs.set(m.tool_call_id, textOf(m.content));
  }
  return script;
}

/** A generated run (the project's seeded generator: parallel calls, failures), without steering or reasoning the agent could not replay. */
function generatedScript(steps: number, seed: number): Script {
  const run = generateRun({ seed, steps, steering: 0, reasoning: 0 }).messages;
  return scriptOf(renderMessages(run, "openai-chat") as OpenAIChatWire);
}

/** The corpus run `id` (a real agent's transcript). */
function corpusScript(id: string): Script {
  const run = corpusLines()
    .filter((l) => l.includes(JSON.stringify(id)))
    .map((l) => JSON.parse(l) as CorpusRun)
    .find((r) => r.id === id);
  if (!run) throw new Error(`no corpus run ${id}`);
  return scriptOf(run.messages as unknown as OpenAIChatWire);
}

// ---------------------------------------------------------------------------------------------
// The stub model, the tools, the recorder.

/** A tool-calling chat model that replays a script: call k < steps makes step k's calls, then it answers. It records every prompt. */
class ScriptedModel extends BaseChatModel {
  readonly prompts: BaseMessage[][] = [];
  /** The model id ctxfold reads for the budget (as ChatOpenAI's `model`). */
  model: string;

  /** `scale`: the provider's tokens per o200k token, as the usage it reports counts them. */
  constructor(
    readonly script: Script,
    model = "scripted",
    readonly scale = 1,
  ) {
    super({});
    this.model = model;
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.prompts.push(messages);
    const step = this.script.steps[this.prompts.length - 1];
    const usage_metadata = {
      input_tokens: Math.ceil(this.scale * exactTokens(parseMessages(dictsOf(messages), { format: "langchain" }).messages)),
      output_tokens: 10,
      total_tokens: 0,
    };
    usage_metadata.total_tokens = usage_metadata.input_tokens + 10;
    const message = step
      ? new AIMessage({ content: step.text, tool_calls: step.calls.map((c) => ({ ...c, type: "tool_call" as const })), usage_metadata })
      : new AIMessage({ content: this.script.answer, usage_metadata });
    return { generations: [{ text: textOf(message.content), message }] };
  }
}

/** One real tool per tool name of the script, each returning the recorded output of the call it answers. */
function toolsOf(script: Script) {
  const names = new Set(script.steps.flatMap((s) => s.calls.map((c) => c.name)));
  return [...names].map((name) =>
    tool((_args, config) => script.outputs.get(config.toolCall!.id!) ?? "", { name, description: `The run's ${name} tool.`, schema: z.looseObject({}) }),
  );
}

/** A middleware in front of ctxfold's: records the prompt each call would send uncompacted (system message first, as the agent sends it). */
function recorder(into: BaseMessage[][]) {
  return createMiddleware({
    name: "Recorder",
    wrapModelCall: (request, handler) => {
      into.push([...(request.systemMessage.text === "" ? [] : [request.systemMessage]), ...request.messages]);
      return handler(request);
    },
  });
}

/** Runs the script through createAgent with ctxfold's middleware; returns what each call would have sent and what the model got, and the final state. */
async function runAgent(
  script: Script,
  middleware: ReturnType<typeof ctxfoldMiddleware>,
  config: { thread_id?: string } = {},
  scale = 1,
  extraTools: ReturnType<typeof tool>[] = [],
) {
  const model = new ScriptedModel(script, "scripted", scale);
  const inputs: BaseMessage[][] = [];
  const agent = createAgent({ model, tools: [...toolsOf(script), ...extraTools], systemPrompt: script.system, middleware: [recorder(inputs), middleware] });
  const state = await agent.invoke({ messages: [new HumanMessage(script.task)] }, { configurable: config, recursionLimit: 10_000 });
  return { inputs, prompts: model.prompts, state };
}

// ---------------------------------------------------------------------------------------------
// What every prompt must be.

/** The canonical messages of LangChain messages, rendered to OpenAI Chat and parsed back (what an OpenAI chat model would be sent). */
function asOpenAIChat(messages: readonly BaseMessage[]): Message[] {
  const canonical = parseMessages(dictsOf(messages), { format: "langchain" }).messages;
  return parseMessages(renderMessages(canonical, "openai-chat"), { format: "openai-chat" }).messages;
}

/** Calls that start an epoch: the previous call's messages are not a prefix of theirs, compared by `same`. */
function epochStarts(prompts: readonly BaseMessage[][], same: (a: BaseMessage, b: BaseMessage) => boolean): number[] {
  const starts = [0];
  for (let k = 1; k < prompts.length; k++) {
    const prev = prompts[k - 1];
    if (!(prev.length <= prompts[k].length && prev.every((m, j) => same(m, prompts[k][j])))) starts.push(k);
  }
  return starts;
}

const sameContent = (a: BaseMessage, b: BaseMessage) => JSON.stringify(dictsOf([a])) === JSON.stringify(dictsOf([b]));

/**
 * Asserts the loop's prompts (see checkPrompts), and more: no new violation once rendered to
 * OpenAI Chat, several epochs within which calls only append (the same objects, not only equal
 * ones), the whole history in the agent's final state. Returns the loop's numbers.
 */
function checkLoop(script: Script, budget: number, run: Awaited<ReturnType<typeof runAgent>>) {
  const { inputs, prompts, state } = run;
  expect(prompts.length).toBe(script.steps.length + 1);
  expect(inputs.length).toBe(prompts.length);
  const calls: RecordedCall[] = prompts.map((p, k) => ({ input: dictsOf(inputs[k]), received: dictsOf(p) }));
  const { epochs, overBudget } = checkPrompts(calls, budget, "langchain");
  let maxTokens = 0;
  prompts.forEach((p, k) => {
    const sent = asOpenAIChat(p);
    maxTokens = Math.max(maxTokens, exactTokens(sent));
    const issues = newViolations(validate(asOpenAIChat(inputs[k]), "openai-chat"), validate(sent, "openai-chat")).filter((i) => i.severity === "error");
    expect(issues, `call ${k}: new OpenAI Chat violations`).toEqual([]);
  });
  expect(maxTokens).toBeLessThanOrEqual(budget);
  // Several epochs (checkPrompts: at most one per four calls), within each of which every
  // prompt is the previous one's messages plus new ones: equal, and the very same objects.
  const starts = epochStarts(prompts, sameContent);
  expect(starts.length - 1).toBe(epochs);
  expect(starts.length).toBeGreaterThanOrEqual(4);
  expect(epochStarts(prompts, (a, b) => a === b)).toEqual(starts);
  // The system prompt is sent first at every call: the agent's own system message, not a copy.
  prompts.forEach((p, k) => expect(p[0]).toBe(inputs[k][0]));
  expect(prompts[0][0]).toBeInstanceOf(SystemMessage);
  // The agent's state holds the whole run: the task, every step's message and each call's full output, the answer.
  const history = state.messages;
  expect(history.length).toBe(2 + script.steps.reduce((n, s) => n + 1 + s.calls.length, 0));
  expect(history[0]).toBeInstanceOf(HumanMessage);
  expect(history[0].content).toBe(script.task);
  const results = history.filter((m): m is ToolMessage => m instanceof ToolMessage);
  expect(results.length).toBe(script.outputs.size);
  for (const r of results) expect(r.content).toBe(script.outputs.get(r.tool_call_id));
  expect(history.at(-1)!.content).toBe(script.answer);
  const historyTokens = exactTokens(asOpenAIChat([prompts[0][0], ...history]));
  expect(historyTokens).toBeGreaterThan(3 * budget);
  return { calls: prompts.length, epochs, overBudget, maxTokens, historyTokens };
}

// ---------------------------------------------------------------------------------------------

describe("ctxfoldMiddleware in a createAgent loop", () => {
  it("a generated 80-step run: every call within budget, valid, appending within epochs; the state keeps the whole history", async () => {
    const script = generatedScript(80, 9);
    const budget = 8000;
    const run = await runAgent(script, ctxfoldMiddleware({ budget }), { thread_id: "gen" });
    checkLoop(script, budget, run);
  }, 120_000);

  it.skipIf(!hasCorpus)(
    `a real agent's 145-step run from the corpus${hasCorpus ? "" : ` — ${kNoCorpusReason}`}`,
    async () => {
      const script = corpusScript("mini-gemini3pro/django__django-16560");
      expect(script.steps.length).toBe(145);
      const budget = 8000;
      // No thread id: the conversation is found by its stable prefix.
      const run = await runAgent(script, ctxfoldMiddleware({ budget }));
      checkLoop(script, budget, run);
    },
    180_000,
  );

  it("follows the input tokens the model reports: with a tokenizer counting 1.3× o200k, every call after the first stays within the window", async () => {
    const script = generatedScript(60, 11);
    const window = 12_000;
    const reserve = 1_000;
    const reported = (run: Awaited<ReturnType<typeof runAgent>>) =>
      run.prompts.map((p) => Math.ceil(1.3 * exactTokens(parseMessages(dictsOf(p), { format: "langchain" }).messages)));
    // Without feedback: the window counted as o200k tokens, so the model's own count overflows it.
    const blind = reported(await runAgent(script, ctxfoldMiddleware({ contextWindow: window, reserveTokens: reserve, usageFeedback: false }), {}, 1.3));
    expect(Math.max(...blind)).toBeGreaterThan(window);
    // With it: from the second call on, within the window by the reported count.
    const events: UsageEvent[] = [];
    const counts = reported(
      await runAgent(script, ctxfoldMiddleware({ contextWindow: window, reserveTokens: reserve, onUsage: (e) => events.push(e) }), {}, 1.3),
    );
    expect(Math.max(...counts.slice(1))).toBeLessThanOrEqual(window);
    expect(events.length).toBe(counts.length);
    expect(events.every((e) => e.model === "scripted")).toBe(true);
  });

  it("a model reporting 1 input token at every call cannot lift the budget past the window: each report clamped to the floor", async () => {
    const script = generatedScript(60, 11);
    const window = 12_000;
    const reserve = 1_000;
    const events: UsageEvent[] = [];
    // A scale this small reports ceil(1e-9 × tokens) = 1 token for every prompt.
    const run = await runAgent(script, ctxfoldMiddleware({ contextWindow: window, reserveTokens: reserve, onUsage: (e) => events.push(e) }), {}, 1e-9);
    const sent = run.prompts.map((p) => exactTokens(parseMessages(dictsOf(p), { format: "langchain" }).messages));
    expect(Math.max(...sent)).toBeLessThanOrEqual(window - reserve);
    expect(events.length).toBeGreaterThan(10);
    expect(events.every((e) => e.reported === 1 && e.status === "clamped" && e.limit === "floor")).toBe(true);
  });

  it("adds the recall hint to calls that offer a tool named recall, unless the options turn it off", async () => {
    const script = generatedScript(30, 5);
    const recallTool = tool(() => "", { name: "recall", description: "Reads a ref.", schema: z.object({ ref: z.string() }) });
    const hinted = (run: Awaited<ReturnType<typeof runAgent>>) => run.prompts.some((p) => p.some((m) => textOf(m.content).includes(kDefaultRecallHint)));
    expect(hinted(await runAgent(script, ctxfoldMiddleware({ budget: 6_000 }), {}, 1, [recallTool]))).toBe(true);
    expect(hinted(await runAgent(script, ctxfoldMiddleware({ budget: 6_000 })))).toBe(false);
    expect(hinted(await runAgent(script, ctxfoldMiddleware({ budget: 6_000, recallHint: false }), {}, 1, [recallTool]))).toBe(false);
  });

  it("counts the system prompt in the budget: a long one (project notes) leaves the history less room", async () => {
    const script = generatedScript(60, 9);
    // The notes: tool outputs of the run, 3000 to 3500 tokens of them, as agents put a repository's notes in their system prompt.
    const notes: string[] = [];
    const tokens = (texts: string[]) => exactTokens(asOpenAIChat([new SystemMessage(texts.join("\n\n"))]));
    for (const out of script.outputs.values()) if (tokens(notes) < 3000 && tokens([...notes, out]) <= 3500) notes.push(out);
    expect(tokens(notes)).toBeGreaterThanOrEqual(3000);
    script.system = `${script.system}\n\nProject notes:\n${notes.join("\n\n")}`;
    const budget = 12_000;
    const run = await runAgent(script, ctxfoldMiddleware({ budget }), { thread_id: "notes" });
    checkLoop(script, budget, run);
    for (const p of run.prompts) expect(p[0].text).toBe(script.system);
  }, 120_000);

  it("keeps two concurrent conversations (thread ids) in separate sessions of one middleware", async () => {
    const budget = 16_000;
    const middleware = ctxfoldMiddleware({ budget });
    const scripts = [generatedScript(40, 21), generatedScript(40, 22)];
    // Same system prompt and task: only the thread id tells them apart.
    scripts[1].system = scripts[0].system;
    scripts[1].task = scripts[0].task;
    const runs = await Promise.all(scripts.map((s, c) => runAgent(s, middleware, { thread_id: `thread-${c}` })));
    runs.forEach((r) => {
      const calls = r.prompts.map((p, k) => ({ input: dictsOf(r.inputs[k]), received: dictsOf(p) }));
      checkPrompts(calls, budget, "langchain");
    });
  }, 120_000);
});

describe("ctxfoldMiddleware: errors", () => {
  const fails = (fn: () => unknown, code: string, path: string, message: RegExp) => {
    let err: unknown;
    try {
      fn();
    } catch (e) {
      err = e;
    }
    expect(CtxfoldError.isInstance(err), String(err)).toBe(true);
    expect((err as CtxfoldError).code).toBe(code);
    expect((err as CtxfoldError).path).toBe(path);
    expect((err as CtxfoldError).message).toMatch(message);
  };

  it("bad options fail when the middleware is made, naming the option", () => {
    fails(() => ctxfoldMiddleware({ budget: -5 }), "E_BAD_INPUT", "budget", /expected a positive integer, got -5/);
    fails(() => ctxfoldMiddleware({ budget: 1.5 }), "E_BAD_INPUT", "budget", /got 1\.5/);
    fails(() => ctxfoldMiddleware({ contextWindow: 4000, reserveTokens: 4096 }), "E_BAD_INPUT", "reserveTokens", /contextWindow 4000 leaves no room/);
    fails(() => ctxfoldMiddleware({ conversationId: "" }), "E_BAD_INPUT", "conversationId", /a non-empty string, got ""/);
    fails(() => ctxfoldMiddleware({ model: 42 } as never), "E_BAD_INPUT", "model", /expected a model id, got 42/);
    fails(() => ctxfoldMiddleware(12_000 as never), "E_BAD_INPUT", "options", /expected an object .*budget.*, got 12000/);
    fails(() => ctxfoldMiddleware({ budget: 1000, budgetRatio: 2 } as never), "E_BAD_INPUT", "config", /unknown option "budgetRatio"/);
    fails(() => ctxfoldMiddleware({ model: "my-local-model" }), "E_BAD_INPUT", "budget", /context size of model "my-local-model" is unknown: pass budget/);
    expect(ctxfoldMiddleware({ model: "gpt-4o" }).name).toBe("CtxfoldMiddleware");
  });

  it("an unknown model without a budget fails at its first call, before the model is called; a known one needs none", async () => {
    const script = generatedScript(3, 5);
    const model = new ScriptedModel(script, "my-local-model");
    const agent = createAgent({ model, tools: toolsOf(script), systemPrompt: script.system, middleware: [ctxfoldMiddleware()] });
    const err = await agent.invoke({ messages: [new HumanMessage(script.task)] }).catch((e: unknown) => e);
    const cause = (err as Error).cause;
    expect(CtxfoldError.isInstance(cause), String(err)).toBe(true);
    expect((cause as CtxfoldError).code).toBe("E_BAD_INPUT");
    expect((cause as CtxfoldError).message).toMatch(/^budget: the context size of model "my-local-model" is unknown: pass budget/);
    expect(model.prompts).toEqual([]);
    const known = new ScriptedModel(script, "gpt-4o");
    const ok = createAgent({ model: known, tools: toolsOf(script), systemPrompt: script.system, middleware: [ctxfoldMiddleware()] });
    const state = await ok.invoke({ messages: [new HumanMessage(script.task)] });
    expect(known.prompts.length).toBe(4);
    expect(state.messages.at(-1)!.content).toBe(script.answer);
  });

  it("a message ctxfold cannot read is named by its index in the agent's state", async () => {
    const script = generatedScript(2, 6);
    const model = new ScriptedModel(script);
    const agent = createAgent({ model, tools: toolsOf(script), systemPrompt: script.system, middleware: [ctxfoldMiddleware({ budget: 4000 })] });
    const err = await agent
      .invoke({ messages: [new HumanMessage(script.task), new ChatMessage({ content: "looks fine", role: "critic" })] })
      .catch((e: unknown) => e);
    const cause = (err as Error).cause as CtxfoldError;
    expect(CtxfoldError.isInstance(cause), String(err)).toBe(true);
    expect(cause.code).toBe("E_UNKNOWN_ROLE");
    expect(cause.path).toBe("messages[1]");
    expect(cause.message).toMatch(/^messages\[1\]: a LangChain ChatMessage \(type "generic"\) has no ctxfold form/);
    expect(model.prompts).toEqual([]);
  });
});
