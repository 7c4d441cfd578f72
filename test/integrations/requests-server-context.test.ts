/**
 * The request helpers with the providers' server-side context features: the request fields that
 * configure them come back as they were, and the compaction state in the messages stays as the
 * providers require.
 */
import { describe, expect, it } from "vitest";
import { parseMessages, type Format } from "../../src/adapters/index.js";
import { CtxfoldError } from "../../src/errors.js";
import { compactAnthropicRequest, compactOpenAIResponsesRequest } from "../../src/integrations/requests.js";
import { TokenCounter } from "../../src/tokens/token-counter.js";
import { validate } from "../../src/validate/index.js";
import {
  anthropicOnDemandBody,
  anthropicThresholdBody,
  onDemandBlock,
  responsesAgentInput,
  responsesCompaction,
  thresholdBlock,
} from "../helpers-server-context.js";

const budget = 6000;
const tools = [
  {
    type: "function",
    name: "read_file",
    description: "Read a file.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
];

/** Every field of `received` but `except` is the very value of `input`, in the same key order. */
function expectOtherFieldsKept(input: Record<string, unknown>, received: Record<string, unknown>, except: readonly string[]): void {
  expect(Object.keys(received)).toEqual(Object.keys(input));
  for (const k of Object.keys(input)) if (!except.includes(k)) expect(received[k], k).toBe(input[k]);
}

function expectValid(wire: unknown, format: Format): void {
  expect(validate(parseMessages(wire, { format }).messages, format).issues.filter((i) => i.severity === "error")).toEqual([]);
}

const exact = (wire: unknown, format: Format) => {
  const counter = new TokenCounter({ encoding: "o200k_base" });
  return counter.countMessages(parseMessages(wire, { format }).messages, "exact");
};

describe("compactAnthropicRequest with server-side context management", () => {
  it.each([
    ["threshold compaction, all three context edits", anthropicThresholdBody(30, 12), thresholdBlock],
    ["on-demand compaction", anthropicOnDemandBody(30), onDemandBlock],
  ])("%s: context_management and thinking untouched, the compaction block kept, valid, within budget", async (_, body, block) => {
    const before = JSON.stringify(body);
    const out = await compactAnthropicRequest(body, { budget, conversationId: `anthropic-${JSON.stringify(block).length}` });
    expect(JSON.stringify(body)).toBe(before);
    expectOtherFieldsKept(body, out as Record<string, unknown>, ["messages", "system"]);
    const blocks = out.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content));
    expect(blocks.filter((b) => b.type === "compaction").map((b) => JSON.stringify(b))).toContain(JSON.stringify(block));
    expectValid(out, "anthropic");
    expect(exact(out, "anthropic")).toBeLessThanOrEqual(budget);
    expect(exact(body, "anthropic")).toBeGreaterThan(budget);
  });

  it("an on-demand compaction request (the top-level compaction parameter) keeps it", async () => {
    const body = { ...anthropicOnDemandBody(30), compaction: { type: "summarize" } };
    const out = await compactAnthropicRequest(body, { budget, conversationId: "anthropic-summarize" });
    expect(out.compaction).toBe(body.compaction);
  });
});

describe("compactOpenAIResponsesRequest", () => {
  const body = () => ({
    model: "gpt-5",
    instructions: "You are a coding agent. Read files with read_file.",
    input: responsesAgentInput(30, 12),
    tools,
    store: false,
    include: ["reasoning.encrypted_content"],
    context_management: [{ type: "compaction", compact_threshold: 200_000 }],
    max_output_tokens: 4096,
  });

  it("compacts the input within budget; store, include, context_management and the rest untouched; the compaction item kept", async () => {
    const b = body();
    const before = JSON.stringify(b);
    const out = await compactOpenAIResponsesRequest(b, { budget, conversationId: "responses-body" });
    expect(JSON.stringify(b)).toBe(before);
    expectOtherFieldsKept(b, out, ["input"]);
    expect((out.input as Record<string, unknown>[]).map((i) => JSON.stringify(i))).toContain(JSON.stringify(responsesCompaction("a")));
    expectValid(out.input, "openai-responses");
    expect(exact(out.input, "openai-responses")).toBeLessThanOrEqual(budget);
    expect(exact(b.input, "openai-responses")).toBeGreaterThan(budget);
  });

  it("a string input or none, with previous_response_id, comes back as it is", async () => {
    const chained = { model: "gpt-5", previous_response_id: "resp_123", input: "Go on." };
    expect(await compactOpenAIResponsesRequest(chained, { budget })).toBe(chained);
    const bare = { model: "gpt-5", previous_response_id: "resp_123" };
    expect(await compactOpenAIResponsesRequest(bare, { budget })).toBe(bare);
  });

  it("derives the budget from the context window minus max_output_tokens, the tools and the instructions", async () => {
    const b = { ...body(), model: "my-local-model", instructions: "Be careful. ".repeat(400) };
    const counter = new TokenCounter({ encoding: "o200k_base" });
    const beside = counter.count(JSON.stringify(tools), "exact") + counter.count(b.instructions, "exact");
    const out = await compactOpenAIResponsesRequest(b, { contextWindow: 12_000, conversationId: "responses-derived" });
    expect(exact(out.input, "openai-responses")).toBeLessThanOrEqual(12_000 - 4096 - beside);
    const err = await compactOpenAIResponsesRequest({ ...b, instructions: "x ".repeat(9000) }, { contextWindow: 12_000 }).catch((e: unknown) => e);
    expect(CtxfoldError.isInstance(err) && err.code).toBe("E_BAD_INPUT");
    expect((err as CtxfoldError).path).toBe("body.instructions");
  });

  it("names a body or an input of the wrong shape", async () => {
    const notBody = await compactOpenAIResponsesRequest([] as never, { budget }).catch((e: unknown) => e);
    expect((notBody as CtxfoldError).path).toBe("body");
    const notInput = await compactOpenAIResponsesRequest({ model: "gpt-5", input: 42 } as never, { budget }).catch((e: unknown) => e);
    expect((notInput as CtxfoldError).path).toBe("body.input");
  });
});
