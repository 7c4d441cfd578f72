import { describe, expect, it } from "vitest";
import { parseMessages } from "../../src/adapters/index.js";
import type { AnthropicMessage, AnthropicWire } from "../../src/adapters/anthropic.js";
import { CtxfoldError } from "../../src/errors.js";
import {
  compactAnthropicRequest,
  compactOpenAIRequest,
  compactOpenAIResponsesRequest,
  type AnthropicRequestOptions,
  type UsageEvent,
} from "../../src/integrations/requests.js";
import { TokenCounter } from "../../src/tokens/token-counter.js";
import { agentRun, callPoints, checkPrompts, exactTokens, historyIn, type RecordedCall } from "./harness.js";

const budget = 16_000;

const openaiTools = [
  {
    type: "function",
    function: { name: "read_file", description: "Read a file.", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  },
  {
    type: "function",
    function: {
      name: "bash",
      description: "Run a shell command.",
      parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    },
  },
];
const anthropicTools = [
  { name: "read_file", description: "Read a file.", input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "bash", description: "Run a shell command.", input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
];
const ephemeral = () => ({ type: "ephemeral" });

/** A stand-in for the SDK call: records each body it is sent. */
function stubSend<B>() {
  const sent: B[] = [];
  return {
    sent,
    send: async (body: B) => {
      sent.push(body);
      return { ok: true };
    },
  };
}

/** Every field of `received` but `except` is the very value of `input`, in the same key order. */
function expectOtherFieldsKept(input: Record<string, unknown>, received: Record<string, unknown>, except: readonly string[]): void {
  expect(Object.keys(received)).toEqual(Object.keys(input));
  for (const k of Object.keys(input)) if (!except.includes(k)) expect(received[k], k).toBe(input[k]);
}

type Body = Record<string, unknown> & { messages: unknown[] };

// ---------------------------------------------------------------------------------------------

describe("compactOpenAIRequest: the 200-step agent loop", () => {
  it("every request within budget, valid, a stable prefix between epochs, every other field kept", async () => {
    const run = agentRun(200, 31);
    const { sent, send } = stubSend<Body>();
    const calls: RecordedCall[] = [];
    for (const at of callPoints(run)) {
      const body: Body = {
        model: "gpt-4o",
        messages: historyIn(run, at, "openai-chat") as unknown[],
        tools: openaiTools,
        temperature: 0.2,
        max_completion_tokens: 1024,
        metadata: { run: "loop" },
        stream: false,
      };
      const before = JSON.stringify(body);
      // Options written inline on every call: the module-wide pool keeps the session.
      await send(await compactOpenAIRequest(body, { budget }));
      const received = sent.at(-1)!;
      expect(JSON.stringify(body)).toBe(before); // the caller's body is not mutated
      expectOtherFieldsKept(body, received, ["messages"]);
      calls.push({ input: body.messages, received: received.messages });
    }
    const { overBudget } = checkPrompts(calls, budget, "openai-chat");
    expect(overBudget).toBeGreaterThan(100);
  }, 120_000);

  it("derives the budget from the context window minus max_completion_tokens and the tool definitions", async () => {
    const run = agentRun(60, 32);
    const body = {
      model: "my-local-model",
      messages: historyIn(run, run.length - 1, "openai-chat") as unknown[],
      tools: openaiTools,
      max_completion_tokens: 4000,
    };
    const toolTokens = new TokenCounter({ encoding: "o200k_base" }).count(JSON.stringify(openaiTools), "exact");
    const out = await compactOpenAIRequest(body, { contextWindow: 20_000, conversationId: "derived" });
    const tokens = exactTokens(parseMessages(out.messages, { format: "openai-chat" }).messages);
    expect(exactTokens(parseMessages(body.messages, { format: "openai-chat" }).messages)).toBeGreaterThan(20_000);
    expect(tokens).toBeLessThanOrEqual(20_000 - 4000 - toolTokens);
    // max_tokens (the older name) counts the same; null is absent.
    const legacy = await compactOpenAIRequest(
      { ...body, max_completion_tokens: null, max_tokens: 4000 },
      { contextWindow: 20_000, conversationId: "derived-legacy" },
    );
    expect(exactTokens(parseMessages(legacy.messages, { format: "openai-chat" }).messages)).toBeLessThanOrEqual(20_000 - 4000 - toolTokens);
    // A compactor setting beside the request options (its own pool; conversationId stays the helper's).
    const tuned = await compactOpenAIRequest(body, { contextWindow: 20_000, conversationId: "derived-tuned", ledgerRatio: 0 });
    expect(exactTokens(parseMessages(tuned.messages, { format: "openai-chat" }).messages)).toBeLessThan(tokens);
  });

  it("an unknown context size without a budget says so; a bad field is named", async () => {
    const body = { model: "my-local-model", messages: [{ role: "user", content: "hi" }] };
    const err = await compactOpenAIRequest(body).catch((e: unknown) => e);
    expect(CtxfoldError.isInstance(err) && err.code).toBe("E_BAD_INPUT");
    expect((err as Error).message).toBe(
      'budget: the context size of model "my-local-model" is unknown: pass budget (tokens the prompt may take) or contextWindow',
    );
    const bad = await compactOpenAIRequest({ ...body, model: "gpt-4o", max_tokens: -5 }).catch((e: unknown) => e);
    expect((bad as CtxfoldError).path).toBe("body.max_tokens");
    // An answer's room past the window names the body's field and the window, in every helper.
    const huge = await compactOpenAIRequest({ ...body, model: "gpt-4o", max_tokens: 1e9 }).catch((e: unknown) => e);
    expect(huge).toMatchObject({ code: "E_BAD_INPUT", path: "body.max_tokens" });
    expect((huge as Error).message).toBe(
      'body.max_tokens: 1000000000 exceeds the context window of model "gpt-4o" (128000 tokens): no room is left for the messages',
    );
    const hugeCompletion = await compactOpenAIRequest({ ...body, model: "gpt-4o", max_completion_tokens: 128_000 }).catch((e: unknown) => e);
    expect(hugeCompletion).toMatchObject({ code: "E_BAD_INPUT", path: "body.max_completion_tokens" });
    const hugeAnthropic = await compactAnthropicRequest({ model: "claude-sonnet-4-5", max_tokens: 1e9, messages: [{ role: "user", content: "hi" }] }).catch(
      (e: unknown) => e,
    );
    expect(hugeAnthropic).toMatchObject({ code: "E_BAD_INPUT", path: "body.max_tokens" });
    expect((hugeAnthropic as Error).message).toMatch(/^body\.max_tokens: 1000000000 exceeds the context window of model "claude-sonnet-4-5" \(\d+ tokens\)/);
    const hugeResponses = await compactOpenAIResponsesRequest({ model: "gpt-4o", max_output_tokens: 1e9, input: [{ role: "user", content: "hi" }] }).catch(
      (e: unknown) => e,
    );
    expect(hugeResponses).toMatchObject({ code: "E_BAD_INPUT", path: "body.max_output_tokens" });
    const tools = await compactOpenAIRequest({ ...body, tools: [{ description: "x".repeat(40_000) }] }, { contextWindow: 8000 }).catch((e: unknown) => e);
    expect((tools as CtxfoldError).path).toBe("body.tools");
    // A known model needs no budget.
    await expect(compactOpenAIRequest({ ...body, model: "gpt-4o" })).resolves.toEqual({ ...body, model: "gpt-4o" });
  });

  it("names an unknown message shape and where it is", async () => {
    const messages = [
      { role: "system", content: "sys" },
      { role: "user", content: "task" },
      { role: "wizard", content: "abracadabra" },
    ];
    const err = await compactOpenAIRequest({ model: "gpt-4o", messages }, { budget }).catch((e: unknown) => e);
    expect(CtxfoldError.isInstance(err) && err.code).toBe("E_UNKNOWN_ROLE");
    expect((err as Error).message).toMatch(/messages\[2\].*"wizard"/);
    const notBody = await compactOpenAIRequest({ model: "gpt-4o", input: [] } as never, { budget }).catch((e: unknown) => e);
    expect((notBody as CtxfoldError).path).toBe("body.messages");
  });

  it("keeps two interleaved conversations in separate sessions (keyed by their stable prefix)", async () => {
    const runs = [agentRun(60, 33), agentRun(60, 34)];
    const points = runs.map(callPoints);
    const calls: RecordedCall[][] = [[], []];
    for (let k = 0; k < Math.max(points[0].length, points[1].length); k++) {
      for (const c of [0, 1]) {
        const at = points[c][k];
        if (at === undefined) continue;
        const messages = historyIn(runs[c], at, "openai-chat") as unknown[];
        const out = await compactOpenAIRequest({ model: "gpt-4o", messages }, { budget });
        calls[c].push({ input: messages, received: out.messages });
      }
    }
    // One shared session would start a new epoch at every switch.
    for (const c of [0, 1]) checkPrompts(calls[c], budget, "openai-chat");
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
// Anthropic.

interface Mark {
  area: "tools" | "system" | "messages";
  i: number;
  k?: number;
  block: Record<string, unknown>;
}

/** Every block of a request carrying a cache_control, in prompt order. */
function marksOf(body: { tools?: unknown; system?: unknown; messages: readonly unknown[] }): Mark[] {
  const out: Mark[] = [];
  const has = (b: unknown): b is Record<string, unknown> => typeof b === "object" && b !== null && (b as { cache_control?: unknown }).cache_control != null;
  if (Array.isArray(body.tools)) body.tools.forEach((b, i) => has(b) && out.push({ area: "tools", i, block: b }));
  if (Array.isArray(body.system)) body.system.forEach((b, i) => has(b) && out.push({ area: "system", i, block: b }));
  body.messages.forEach((m, i) => {
    const content = (m as AnthropicMessage).content;
    if (!Array.isArray(content)) return;
    content.forEach((b, k) => {
      if (has(b)) out.push({ area: "messages", i, k, block: b });
      const inner = (b as { content?: unknown }).content;
      if (b.type === "tool_result" && Array.isArray(inner)) inner.forEach((c) => has(c) && out.push({ area: "messages", i, k, block: c }));
    });
  });
  return out;
}

/** `m` with a cache_control on its first block (a copy). */
function markFirst(m: AnthropicMessage): AnthropicMessage {
  const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
  return { ...m, content: [{ ...content[0], cache_control: ephemeral() }, ...content.slice(1)] };
}

/** The agent's request at call point `at`: the history with the caller's breakpoints. */
function anthropicBody(
  run: ReturnType<typeof agentRun>,
  at: number,
  marks: { tools?: boolean; system?: boolean; task?: boolean; firstResult?: boolean },
): Body {
  const { system, messages } = historyIn(run, at, "anthropic") as AnthropicWire;
  const msgs = [...messages];
  if (marks.task) msgs[0] = markFirst(msgs[0]);
  if (marks.firstResult && msgs.length > 2) msgs[2] = markFirst(msgs[2]);
  const tools = marks.tools ? [anthropicTools[0], { ...anthropicTools[1], cache_control: ephemeral() }] : anthropicTools;
  const sys = marks.system ? [{ type: "text", text: system as string, cache_control: ephemeral() }] : system;
  return {
    model: "claude-sonnet-4-20250514",
    max_tokens: 2048,
    system: sys,
    messages: msgs,
    tools,
    temperature: 0,
    metadata: { user_id: "u1" },
    stop_sequences: ["</done>"],
  };
}

/**
 * Runs the loop and checks the breakpoints of every request: at most 4, tools and system marks
 * kept, none on an empty text block, every message-level one on a block of the request or ours,
 * ours (when asked) on the last message of the epoch's first output. Returns the calls.
 */
async function anthropicLoop(run: ReturnType<typeof agentRun>, marks: Parameters<typeof anthropicBody>[2], options: AnthropicRequestOptions) {
  const { sent, send } = stubSend<Body>();
  const calls: RecordedCall[] = [];
  let prev: string[] | undefined;
  let epochEnd = 0;
  let replacedMarks = 0;
  let droppedCallerMarks = 0;
  for (const at of callPoints(run)) {
    const body = anthropicBody(run, at, marks);
    const before = JSON.stringify(body);
    await send(await compactAnthropicRequest(body, options));
    const received = sent.at(-1)! as Body & { messages: AnthropicMessage[] };
    expect(JSON.stringify(body)).toBe(before);
    expectOtherFieldsKept(body, received, ["messages", "system"]);
    calls.push({ input: body, received });

    const wire = received.messages.map((m) => JSON.stringify(m));
    const kept = prev !== undefined && prev.length <= wire.length && prev.every((m, j) => m === wire[j]);
    if (!kept) epochEnd = received.messages.length;
    prev = wire;

    const got = marksOf(received);
    const asked = marksOf(body);
    expect(got.length, `call at ${at}: ${got.length} breakpoints`).toBeLessThanOrEqual(4);
    for (const m of got) if (m.block.type === "text") expect((m.block.text as string).trim()).not.toBe("");
    const known = new Set(asked.map((m) => JSON.stringify(m.block)));
    const ours = (m: Mark) => options.cacheBreakpoint && m.area === "messages" && m.i === epochEnd - 1;
    for (const m of got)
      if (m.area === "messages" && !ours(m))
        expect(known.has(JSON.stringify(m.block)), `call at ${at}: a breakpoint on content the request did not hold`).toBe(true);
    if (options.cacheBreakpoint) expect(got.some(ours), `call at ${at}: no breakpoint at the end of the compacted prefix (message ${epochEnd - 1})`).toBe(true);
    // A caller's message-level breakpoint missing from the output: on replaced content, or dropped for room.
    const kept_ = new Set(got.map((m) => JSON.stringify(m.block)));
    const receivedBlocks = new Set(
      (received.messages as AnthropicMessage[]).flatMap((m) => (Array.isArray(m.content) ? m.content.map((b: unknown) => JSON.stringify(b)) : [])),
    );
    for (const m of asked.filter((m) => m.area === "messages" && !kept_.has(JSON.stringify(m.block)))) {
      if (receivedBlocks.has(JSON.stringify(withoutMark(m.block)))) droppedCallerMarks++;
      else replacedMarks++;
    }
    if (Array.isArray(body.system)) expect(received.system).toEqual(body.system); // byte-identical (an earlier call's equal object within an epoch)
  }
  return { calls, replacedMarks, droppedCallerMarks, sent };
}

function withoutMark(b: Record<string, unknown>): Record<string, unknown> {
  const { cache_control, ...rest } = b;
  void cache_control;
  return rest;
}

// Seed 14 at 200 steps is a run on which the compactor once opened the Anthropic turn in
// progress without its thinking after an epoch (THINKING_DROPPED); it now puts the turn's
// opener back (test/policy/tiered.test.ts covers that on a bare session).
describe("compactAnthropicRequest: the 200-step agent loop", () => {
  it("within budget, valid, stable prefix; breakpoints valid, ours after the compacted prefix", async () => {
    const run = agentRun(200, 14);
    const options: AnthropicRequestOptions = { budget, cacheBreakpoint: true, conversationId: "anthropic-loop" };
    const { calls, replacedMarks, sent } = await anthropicLoop(run, { tools: true, system: true, firstResult: true }, options);
    const { overBudget } = checkPrompts(calls, budget, "anthropic");
    expect(overBudget).toBeGreaterThan(100);
    // The caller's mark on the first tool result went with its content once compaction replaced it.
    expect(replacedMarks).toBeGreaterThan(0);
    // Tools were never touched (3 caller breakpoints + ours fit).
    for (const [k, body] of sent.entries()) expect(body.tools, `call ${k}`).toBe((calls[k].input as Body).tools);
  }, 120_000);

  it("a request with 4 caller breakpoints: ours takes the oldest message-level one's place, tools and system kept", async () => {
    const run = agentRun(60, 55);
    // A target that leaves the first result whole for a while, so that all four caller marks stand.
    const { calls, droppedCallerMarks, sent } = await anthropicLoop(
      run,
      { tools: true, system: true, task: true, firstResult: true },
      { budget, cacheBreakpoint: true, conversationId: "four", targetRatio: 0.6 },
    );
    expect(droppedCallerMarks).toBeGreaterThan(0);
    for (const [k, body] of sent.entries()) {
      const got = marksOf(body);
      expect(got.filter((m) => m.area !== "messages").length, `call ${k}`).toBe(2);
      expect(body.tools).toBe((calls[k].input as Body).tools);
    }
    checkPrompts(calls, budget, "anthropic");
  }, 120_000);

  it("without cacheBreakpoint it adds none; with tools and system holding 4 it places none", async () => {
    const run = agentRun(80, 43);
    const { sent } = await anthropicLoop(run, { system: true }, { budget, conversationId: "none" });
    for (const body of sent) expect(marksOf(body).map((m) => m.area)).toEqual(["system"]);

    const { system, messages } = historyIn(run, 40, "anthropic") as AnthropicWire;
    const tools = anthropicTools.map((t) => ({ ...t, cache_control: ephemeral() }));
    const sys = [
      { type: "text", text: "You are an agent.", cache_control: ephemeral() },
      { type: "text", text: system as string, cache_control: ephemeral() },
    ];
    const body = { model: "claude-sonnet-4-20250514", max_tokens: 1024, tools, system: sys, messages: [markFirst(messages[0]), ...messages.slice(1)] };
    const out = await compactAnthropicRequest(body, { budget, cacheBreakpoint: true, conversationId: "full" });
    expect(marksOf(out).map((m) => m.area)).toEqual(["tools", "tools", "system", "system"]);
    expect(out.tools).toBe(tools);
    expect(out.system).toBe(sys);
    // Over the limit in tools and system alone (Anthropic rejects it as sent): the earliest go.
    const five = await compactAnthropicRequest(
      { ...body, tools: [...tools, { ...anthropicTools[0], name: "x", cache_control: ephemeral() }] },
      { budget, conversationId: "five" },
    );
    expect(marksOf(five).map((m) => `${m.area}${m.i}`)).toEqual(["tools1", "tools2", "system0", "system1"]);
  }, 60_000);

  it("a breakpoint on an empty text block is removed; a string content it marks becomes one text block", async () => {
    const messages = [
      {
        role: "user",
        content: [
          { type: "text", text: "Fix the failing test." },
          { type: "text", text: " ", cache_control: ephemeral() },
        ],
      },
      { role: "assistant", content: "Looking." },
      { role: "user", content: "Go on." },
    ];
    const out = await compactAnthropicRequest(
      { model: "claude-sonnet-4-20250514", max_tokens: 100, messages },
      { budget, cacheBreakpoint: true, conversationId: "empty" },
    );
    const got = marksOf(out);
    expect(got.length).toBe(1);
    expect(got[0]).toMatchObject({ area: "messages", i: 2, k: 0, block: { type: "text", text: "Go on.", cache_control: { type: "ephemeral" } } });
    expect(messages[0].content).toEqual([
      { type: "text", text: "Fix the failing test." },
      { type: "text", text: " ", cache_control: ephemeral() },
    ]); // not mutated
    expect(messages[2].content).toBe("Go on.");
  });

  it("an unknown context size without a budget says so; the budget is the window minus max_tokens and tools", async () => {
    const body = { model: "claude-local", max_tokens: 1000, messages: [{ role: "user", content: "hi" }] };
    const err = await compactAnthropicRequest(body).catch((e: unknown) => e);
    expect(CtxfoldError.isInstance(err) && err.code).toBe("E_BAD_INPUT");
    expect((err as Error).message).toMatch(/context size of model "claude-local" is unknown: pass budget/);
    const run = agentRun(60, 44);
    const long = {
      ...body,
      system: "sys",
      messages: (historyIn(run, run.length - 1, "anthropic") as AnthropicWire).messages,
      tools: anthropicTools,
      max_tokens: 3000,
    };
    const toolTokens = new TokenCounter({ encoding: "o200k_base" }).count(JSON.stringify(anthropicTools), "exact");
    const out = await compactAnthropicRequest(long, { contextWindow: 20_000, conversationId: "derived" });
    expect(exactTokens(parseMessages(out, { format: "anthropic" }).messages)).toBeLessThanOrEqual(20_000 - 3000 - toolTokens);
  });

  it("names an unknown message shape and where it is", async () => {
    const messages = [
      { role: "user", content: "task" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash" }] },
    ];
    const err = await compactAnthropicRequest({ model: "claude-sonnet-4-20250514", max_tokens: 10, messages }, { budget }).catch((e: unknown) => e);
    expect(CtxfoldError.isInstance(err) && err.code).toBe("E_SCHEMA");
    expect((err as Error).message).toMatch(/messages\[1\]/);
    expect((err as Error).message).toMatch(/input/);
    const role = await compactAnthropicRequest(
      { model: "claude-sonnet-4-20250514", max_tokens: 10, messages: [{ role: "system", content: "x" }] },
      { budget },
    ).catch((e: unknown) => e);
    expect((role as CtxfoldError).message).toMatch(/^messages\[0\]\.role: unknown anthropic role "system"/);
  });

  it("keeps two interleaved conversations (by conversationId) in separate sessions", async () => {
    const runs = [agentRun(60, 45), agentRun(60, 54)];
    const points = runs.map(callPoints);
    const calls: RecordedCall[][] = [[], []];
    const options = [
      { budget, conversationId: "a", cacheBreakpoint: true },
      { budget, conversationId: "b", cacheBreakpoint: true },
    ];
    for (let k = 0; k < Math.max(points[0].length, points[1].length); k++) {
      for (const c of [0, 1]) {
        const at = points[c][k];
        if (at === undefined) continue;
        const body = anthropicBody(runs[c], at, {});
        calls[c].push({ input: body, received: await compactAnthropicRequest(body, options[c]) });
      }
    }
    for (const c of [0, 1]) checkPrompts(calls[c], budget, "anthropic");
  }, 120_000);
});

describe("request helpers: the provider's usage report of the previous request", () => {
  const counter = new TokenCounter({ encoding: "o200k_base" });
  const window = 30_000;
  const room = window - 4096;

  it("OpenAI: `usage.prompt_tokens` sets the next budget by the observed ratio (tools counted on both sides)", async () => {
    const run = agentRun(120, 33);
    const at = callPoints(run);
    const events: UsageEvent[] = [];
    const options = { contextWindow: window, conversationId: "usage-openai", onUsage: (e: UsageEvent) => events.push(e) };
    const toolTokens = counter.count(JSON.stringify(openaiTools), "exact");
    const first = await compactOpenAIRequest(
      { model: "my-local-model", messages: historyIn(run, at[5]!, "openai-chat") as unknown[], tools: openaiTools },
      options,
    );
    const sent = exactTokens(parseMessages(first.messages, { format: "openai-chat" }).messages) + toolTokens;
    // The provider counts 1.5× what o200k counts.
    const usage = { prompt_tokens: Math.ceil(1.5 * sent), completion_tokens: 12, total_tokens: Math.ceil(1.5 * sent) + 12 };
    const body = { model: "my-local-model", messages: historyIn(run, run.length - 1, "openai-chat") as unknown[], tools: openaiTools };
    expect(exactTokens(parseMessages(body.messages, { format: "openai-chat" }).messages)).toBeGreaterThan(room);
    const out = await compactOpenAIRequest(body, options, { usage });
    expect(events).toHaveLength(1);
    const e = events[0]!;
    expect(e).toMatchObject({ status: "applied", reported: usage.prompt_tokens, before: undefined, model: "my-local-model" });
    expect(e.after).toBeGreaterThan(1.4);
    expect(e.after).toBeLessThan(1.6);
    // Within the window by the provider's count: messages and tools, 1.5× each.
    const tokens = exactTokens(parseMessages(out.messages, { format: "openai-chat" }).messages);
    expect(tokens + toolTokens).toBeLessThanOrEqual(Math.floor(room / (e.after! * 1.03)));
    expect(Math.ceil(1.5 * (tokens + toolTokens))).toBeLessThanOrEqual(room);
  });

  it("Anthropic: `input_tokens` plus its cache fields is the count", async () => {
    const run = agentRun(20, 34);
    const at = callPoints(run);
    const events: UsageEvent[] = [];
    const options = { contextWindow: window, conversationId: "usage-anthropic", onUsage: (e: UsageEvent) => events.push(e) };
    const body = (end: number) =>
      ({ model: "my-local-model", max_tokens: 1000, ...(historyIn(run, end, "anthropic") as object) }) as {
        model: string;
        max_tokens: number;
        messages: unknown[];
      };
    await compactAnthropicRequest(body(at[2]!), options);
    await compactAnthropicRequest(body(at[4]!), options, {
      usage: { input_tokens: 3, cache_creation_input_tokens: 200, cache_read_input_tokens: 1800, output_tokens: 40 },
    });
    // Read as one count (a count this far below the estimate is then held at the window floor).
    expect(events[0]).toMatchObject({ reported: 2003 });
    expect(events[0]!.status).not.toBe("ignored");
  });

  it("a report of 1 token for a full prompt cannot lift the budget past the window: clamped to the floor, with an event", async () => {
    const run = agentRun(120, 37);
    const at = callPoints(run);
    const events: UsageEvent[] = [];
    const options = { contextWindow: window, conversationId: "usage-one", onUsage: (e: UsageEvent) => events.push(e) };
    await compactOpenAIRequest({ model: "my-local-model", messages: historyIn(run, at[5]!, "openai-chat") as unknown[] }, options);
    const body = { model: "my-local-model", messages: historyIn(run, run.length - 1, "openai-chat") as unknown[] };
    expect(exactTokens(parseMessages(body.messages, { format: "openai-chat" }).messages)).toBeGreaterThan(2 * room);
    const out = await compactOpenAIRequest(body, options, { usage: { prompt_tokens: 1 } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ status: "clamped", limit: "floor", reported: 1, before: undefined });
    expect(events[0]!.after).toBeCloseTo(1 / 1.03, 12);
    expect(exactTokens(parseMessages(out.messages, { format: "openai-chat" }).messages)).toBeLessThanOrEqual(room);
  });

  it("a provider that reports no usage, or absurd figures: an event, a budget from the profile or clamped ratio, never a throw", async () => {
    const run = agentRun(20, 35);
    const at = callPoints(run);
    const events: UsageEvent[] = [];
    const options = { contextWindow: window, conversationId: "usage-none", onUsage: (e: UsageEvent) => events.push(e) };
    const body = (end: number) => ({ model: "my-local-model", messages: historyIn(run, end, "openai-chat") as unknown[] });
    await compactOpenAIRequest(body(at[1]!), options);
    await compactOpenAIRequest(body(at[2]!), options, { usage: undefined });
    await compactOpenAIRequest(body(at[3]!), options, { usage: { prompt_tokens: null, completion_tokens: 3 } });
    await compactOpenAIRequest(body(at[4]!), options, { usage: { prompt_tokens: "lots" } });
    await compactOpenAIRequest(body(at[5]!), options, { usage: { prompt_tokens: 1e15 } });
    expect(events.map((e) => (e.status === "ignored" ? e.reason : e.status))).toEqual(["no_usage", "no_usage", "not_a_number", "clamped"]);
    expect(events[3]!.after).toBe(4);
    // A `call` that is not an object is named.
    const err = await compactOpenAIRequest(body(at[5]!), options, 42 as never).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "E_BAD_INPUT", path: "call" });
  });
});
